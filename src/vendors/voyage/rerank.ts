/**
 * Voyage AI rerankers: POST https://api.voyageai.com/v1/rerank with `Authorization: Bearer <key>`,
 * body {query, documents, model, top_k, return_documents, truncation}; the reply is
 * {object: "list", data: [{index, relevance_score}], model, usage: {total_tokens}} — the list is
 * `data` and the count is `top_k`, unlike Cohere. At most 1,000 documents per request
 * (docs.voyageai.com/reference/reranker-api); relevance_score is in [0, 1] and kept as it is.
 *
 * Errors (docs.voyageai.com/docs/error-codes): bodies are {"detail": "…"}; 400 our request, 401 the
 * key, 403 a forbidden IP, 429 the rate limit, 500 and 502/503/504 Voyage. A refusal that speaks of
 * credit or a missing payment method is a used-up plan, not a bad key.
 */
import type { Classify } from '../../providers/http.js';
import { providerOptionsSchema } from '../../providers/shared.js';
import { httpReranker, maxDocumentsSchema, type RerankHttpOptions, scoresFromList, usageTokens } from '../../providers/rerank.js';
import type { ProviderType, RerankProvider } from '../../providers/types.js';
import { VOYAGE_MAX_DOCUMENTS, VOYAGE_RERANK_PATH, VOYAGE_RERANK_RESULTS, type VoyageRerankRequest } from './wire.js';

export interface VoyageOptions extends RerankHttpOptions {
  baseUrl: string;
  apiKey: string;
  /** rerank-2.5 (default), rerank-2.5-lite, rerank-2, rerank-2-lite (wire.ts lists Voyage's names). */
  model: string;
  /** Let Voyage truncate query and documents to the model's context instead of answering 400. */
  truncation: boolean;
}

const classifyVoyage: Classify = (status, rawBody) =>
  (status === 401 || status === 402 || status === 403) && /run out of credit|add a payment method/i.test(rawBody) ? 'quota' : undefined;

export function createVoyageRerank(name: string, options: VoyageOptions): RerankProvider {
  return httpReranker(name, options, {
    path: VOYAGE_RERANK_PATH,
    body: (call): VoyageRerankRequest => ({
      query: call.query,
      documents: call.documents,
      model: options.model,
      top_k: call.documents.length,
      return_documents: false,
      truncation: options.truncation,
    }),
    scores: (reply, call) => scoresFromList(name, reply, [VOYAGE_RERANK_RESULTS], call.documents.length, 'probability'),
    totalTokens: usageTokens,
    classify: classifyVoyage,
  });
}

export const voyageProviderType: ProviderType = {
  optionsSchema: providerOptionsSchema('voyage', {
    defaultBaseUrl: 'https://api.voyageai.com',
    apiKey: 'required',
    properties: {
      model: { type: 'string', minLength: 1, default: 'rerank-2.5' },
      truncation: { type: 'boolean', default: true },
      maxDocuments: maxDocumentsSchema(VOYAGE_MAX_DOCUMENTS, VOYAGE_MAX_DOCUMENTS),
    },
  }),
  rerank: createVoyageRerank,
};
