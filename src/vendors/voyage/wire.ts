/**
 * Voyage AI's rerank wire format, both directions: what searchgate sends Voyage (rerank.ts) and what
 * it answers Voyage's clients (dialect.ts). Sources: https://docs.voyageai.com/reference/reranker-api
 * (request and answer), https://docs.voyageai.com/docs/reranker (models),
 * https://docs.voyageai.com/docs/error-codes (statuses), voyageai-python 0.5.0
 * (`voyageai/object/reranking.py` reads `usage.total_tokens`; `api_resources/api_requestor.py` reads
 * an error's `detail`).
 */

/** Where Voyage serves rerank, under https://api.voyageai.com; the SDK's base URL ends in /v1. */
export const VOYAGE_RERANK_PATH = '/v1/rerank';

/** Voyage accepts at most this many documents per request. */
export const VOYAGE_MAX_DOCUMENTS = 1000;

/**
 * Voyage's published rerank model names, accepted as aliases of the default model
 * (../shared/spec/dialects.md §4.4). rerank-3 and rerank-3-lite are named only on MongoDB's Japanese
 * Voyage page.
 */
export const VOYAGE_RERANK_MODELS = [
  'rerank-2.5',
  'rerank-2.5-lite',
  'rerank-2',
  'rerank-2-lite',
  'rerank-1',
  'rerank-lite-1',
  'rerank-3',
  'rerank-3-lite',
] as const;

/** The request body. voyageai sends `"top_k": null` when no top_k is given; litellm sends return_documents true. */
export interface VoyageRerankRequest {
  query: string;
  documents: string[];
  model: string;
  /** How many of the best to return; all when absent. */
  top_k?: number | null;
  return_documents?: boolean | null;
  /** Whether Voyage may cut query and documents to the model's context (true) or must refuse them (false). */
  truncation?: boolean | null;
}

export interface VoyageRerankResult {
  index: number;
  /** In [0, 1]. */
  relevance_score: number;
  /** The document's text, only when return_documents is true. */
  document?: string;
}

/** The answer: `data` best first. voyageai fails on an answer without usage.total_tokens. */
export interface VoyageRerankResponse {
  object: 'list';
  data: VoyageRerankResult[];
  model: string;
  usage: { total_tokens: number };
}

/** Where a reply's ranked list sits: `data`, unlike Cohere's `results`. */
export const VOYAGE_RERANK_RESULTS = 'data' satisfies keyof VoyageRerankResponse;

/** Voyage's error body; the SDK raises its error class by status with `detail` as the text. */
export interface VoyageErrorBody {
  detail: string;
}

/**
 * Voyage's 401 sentences (../shared/spec/dialects.md §7.3): "Provided API key is invalid." is the
 * live API's, as quoted in public client code (not in Voyage's docs); "No API key provided." words
 * the 401 that the error-codes page documents for missing or invalid authentication.
 */
export const VOYAGE_AUTH_MESSAGES = {
  missingKey: 'No API key provided.',
  invalidKey: 'Provided API key is invalid.',
} as const;
