/**
 * Cohere Rerank v2: POST https://api.cohere.com/v2/rerank with `Authorization: Bearer <key>`,
 * body {model, query, documents, top_n, max_tokens_per_doc?}; the reply is
 * {id, results: [{index, relevance_score}], meta: {api_version, billed_units: {search_units}}}.
 * relevance_score is already normalised to [0, 1] by Cohere, so it is kept as it is.
 *
 * Errors (docs.cohere.com/reference/errors, cohere-python v2 client): bodies are {"message": "…"};
 * 400/404/422 our request or model name, 401 and 498 the key, 402 the billing limit, 429 the
 * per-minute rate limit — or, for a trial key, the 1,000 calls a month ("… limited to 1000 API
 * calls / month"), which no retry within minutes fixes — 499 a cancelled request, 5xx Cohere.
 */
import type { Classify } from '../../providers/http.js';
import { providerOptionsSchema } from '../../providers/shared.js';
import { cohereShapedBody, httpReranker, maxDocumentsSchema, type RerankHttpOptions, scoresFromList } from '../../providers/rerank.js';
import type { ProviderType, RerankProvider } from '../../providers/types.js';
import { COHERE_RERANK_RESULTS, COHERE_RERANK_V2_PATH, type CohereRerankV2Request } from './wire.js';

export interface CohereOptions extends RerankHttpOptions {
  baseUrl: string;
  apiKey: string;
  /** Cohere rerank model: rerank-v3.5 (default), rerank-v4.0-pro, rerank-multilingual-v3.0… */
  model: string;
  /** Cohere truncates each document to this many tokens (its default 4096). */
  maxTokensPerDoc?: number;
}

const classifyCohere: Classify = (status, rawBody) => {
  if (status === 402) return 'quota';
  if (status === 429 && /\/\s*month|per month/i.test(rawBody)) return 'quota';
  if (status === 498) return 'auth';
  if (status === 499) return 'unavailable';
  return undefined;
};

export function createCohereRerank(name: string, options: CohereOptions): RerankProvider {
  return httpReranker(name, options, {
    path: COHERE_RERANK_V2_PATH,
    body: (call) => {
      const extra: Partial<CohereRerankV2Request> = options.maxTokensPerDoc ? { max_tokens_per_doc: options.maxTokensPerDoc } : {};
      return cohereShapedBody(options.model, call, extra);
    },
    scores: (reply, call) => scoresFromList(name, reply, [COHERE_RERANK_RESULTS], call.documents.length, 'probability'),
    classify: classifyCohere,
  });
}

export const cohereProviderType: ProviderType = {
  optionsSchema: providerOptionsSchema('cohere', {
    defaultBaseUrl: 'https://api.cohere.com',
    apiKey: 'required',
    properties: {
      model: { type: 'string', minLength: 1, default: 'rerank-v3.5' },
      maxTokensPerDoc: { type: 'integer', minimum: 1 },
      // Cohere accepts up to 10,000 documents and recommends at most 1,000 per request.
      maxDocuments: maxDocumentsSchema(1000, 10_000),
    },
  }),
  rerank: createCohereRerank,
};
