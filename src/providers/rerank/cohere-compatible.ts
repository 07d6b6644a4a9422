/**
 * cohere-compatible: any server that speaks the Cohere/Jina-shaped rerank API —
 * vLLM (`/rerank`, `/v1/rerank`, `/v2/rerank`), Infinity (`/rerank`), a LiteLLM proxy (`/rerank`,
 * `/v1/rerank`, `/v2/rerank`). POST {model, query, documents, top_n, return_documents: false};
 * the reply is {id?, model, usage?, results: [{index, relevance_score, document?}]} (older
 * Infinity releases called the list `data`).
 *
 * What relevance_score means depends on the server: vLLM applies the model's activation (sigmoid
 * for one-label cross-encoders such as bge-reranker) and Infinity applies a sigmoid unless asked
 * for raw_scores, so both answer probabilities; a server or model that answers raw logits needs
 * scoreScale 'logit'. A LiteLLM proxy passes on whatever its backend answers.
 *
 * This module also holds what the rerank adapters share (cohere, voyage, tei): the call skeleton,
 * the Cohere-shaped body and the reading of a results list.
 */
import { UpstreamError, type UpstreamFailureKind } from '../errors.js';
import { callJson } from '../http.js';
import { bearer, endpoint, expectObject, providerOptionsSchema, secretsOf } from '../shared.js';
import { scoreScaleSchema, scoresByIndex, type ScoreScale } from './scores.js';
import type { ProviderType, RerankCall, RerankProvider } from '../types.js';

// ---- shared by the rerank adapters -------------------------------------------------------------

export interface RerankHttpOptions {
  apiKey?: string;
  timeoutMs: number;
  maxDocuments: number;
}

/** One upstream call for one batch: where to send what, and how to read the reply. */
export interface RerankExchange {
  url: string;
  body: unknown;
  /** One score in [0, 1] per document of the batch, in document order. */
  read(reply: unknown): number[];
}

export type Classify = (status: number, rawBody: string) => UpstreamFailureKind | undefined;

/**
 * A rerank provider over HTTP with a Bearer key (when one is configured). The gateway already
 * splits requests into batches of at most maxDocuments, so each call scores one whole batch.
 */
export function httpReranker(
  name: string,
  options: RerankHttpOptions,
  exchange: (call: RerankCall) => RerankExchange,
  classify?: Classify,
): RerankProvider {
  return {
    name,
    capabilities: { maxDocuments: options.maxDocuments },
    async rerank(call: RerankCall): Promise<number[]> {
      const { url, body, read } = exchange(call);
      const reply = await callJson({
        provider: name,
        url,
        headers: bearer(options.apiKey),
        body,
        timeoutMs: options.timeoutMs,
        signal: call.signal,
        secrets: secretsOf(options),
        classify,
      });
      return read(reply);
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

/** Scores from a reply object whose list of {index, <score>} sits under one of `listFields`. */
export function scoresFromList(
  provider: string,
  reply: unknown,
  listFields: readonly string[],
  documentCount: number,
  scale: ScoreScale,
  scoreFields: readonly string[] = ['relevance_score'],
): number[] {
  const envelope = expectObject(provider, reply);
  const field = listFields.find((candidate) => Array.isArray(envelope[candidate]));
  if (field === undefined) throw new UpstreamError(provider, 'garbage', `reply has no ${listFields.join(' or ')} array`);
  return scoresByIndex(provider, envelope[field], documentCount, scale, scoreFields);
}

export const maxDocumentsSchema = (defaultValue: number, maximum?: number) => ({
  type: 'integer',
  minimum: 1,
  ...(maximum === undefined ? {} : { maximum }),
  default: defaultValue,
});

// ---- the cohere-compatible adapter -------------------------------------------------------------

export interface CohereCompatibleOptions extends RerankHttpOptions {
  /** The server's root, e.g. http://vllm:8000. */
  baseUrl: string;
  /** The rerank route under baseUrl: /v1/rerank (vLLM, LiteLLM), /rerank (Infinity), /v2/rerank. */
  path: string;
  /** Model name the server knows; default: the gateway's model id (the key under rerank.models). */
  model?: string;
  /** 'probability' for vLLM, Infinity and Cohere-backed proxies; 'logit' for a server answering raw logits. */
  scoreScale: ScoreScale;
}

/**
 * A 402, or LiteLLM's budget_exceeded error (HTTP 400, 429 in some versions), means
 * the key's budget is spent: no retry helps until an operator raises it.
 */
export const classifyCohereCompatible: Classify = (status, rawBody) =>
  status === 402 || /"budget_exceeded"/.test(rawBody) ? 'quota' : undefined;

export function createCohereCompatibleRerank(name: string, options: CohereCompatibleOptions): RerankProvider {
  return httpReranker(
    name,
    options,
    (call) => ({
      url: endpoint(options.baseUrl, options.path),
      body: cohereShapedBody(options.model ?? call.model, call, { return_documents: false }),
      read: (reply) => scoresFromList(name, reply, ['results', 'data'], call.documents.length, options.scoreScale),
    }),
    classifyCohereCompatible,
  );
}

export const cohereCompatibleProviderType: ProviderType = {
  optionsSchema: providerOptionsSchema('cohere-compatible', {
    apiKey: 'optional',
    properties: {
      path: { type: 'string', pattern: '^/', default: '/v1/rerank' },
      model: { type: 'string', minLength: 1 },
      scoreScale: { ...scoreScaleSchema, default: 'probability' },
      maxDocuments: maxDocumentsSchema(1000),
    },
  }),
  rerank: createCohereCompatibleRerank,
};
