/**
 * What the HTTP rerank adapters share (cohere, voyage, tei, cohere-compatible, jina,
 * searchgate-compatible): the call skeleton, the Cohere-shaped request body and the options schema
 * of the batch size. Reading the replies is in scores.ts.
 */
import type { Classify } from '../http.js';
import { bearer, vendorClient, type Vendor } from '../shared.js';
import type { RerankCall, RerankProvider } from '../types.js';

export interface RerankHttpOptions {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  maxDocuments: number;
}

/** What one upstream call for one batch is: where to send what, and how to read the reply. */
interface RerankExchange {
  /** Under options.baseUrl. */
  path: string;
  body(call: RerankCall): unknown;
  /** One score in [0, 1] per document of the batch, in document order. */
  scores(reply: unknown, call: RerankCall): number[];
  classify?: Classify;
  envelope?: Vendor['envelope'];
}

/**
 * A rerank provider over HTTP with a Bearer key (when one is configured). The gateway already
 * splits requests into batches of at most maxDocuments, so each call scores one whole batch.
 */
export function httpReranker(name: string, options: RerankHttpOptions, exchange: RerankExchange): RerankProvider {
  const upstream = vendorClient(name, options, { auth: bearer, classify: exchange.classify, envelope: exchange.envelope });
  return {
    name,
    capabilities: { maxDocuments: options.maxDocuments },
    async rerank(call: RerankCall): Promise<number[]> {
      const reply = await upstream.json(exchange.path, { body: exchange.body(call), signal: call.signal });
      return exchange.scores(reply, call);
    },
  };
}

/**
 * The Cohere-shaped request body. top_n is every document: the gateway ranks and cuts itself, and
 * needs a score for each document of the batch.
 */
export function cohereShapedBody(model: string, call: RerankCall, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model, query: call.query, documents: call.documents, top_n: call.documents.length, ...extra };
}

export const maxDocumentsSchema = (defaultValue: number, maximum?: number) => ({
  type: 'integer',
  minimum: 1,
  ...(maximum === undefined ? {} : { maximum }),
  default: defaultValue,
});
