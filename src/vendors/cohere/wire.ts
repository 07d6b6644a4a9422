/**
 * Cohere's rerank wire format, both directions: what searchgate sends Cohere (rerank.ts) and what it
 * answers Cohere's clients (dialect.ts). Docs: https://docs.cohere.com/reference/rerank (v2),
 * https://docs.cohere.com/v1/reference/rerank (v1), https://docs.cohere.com/docs/rerank (models).
 */

/**
 * Cohere's published rerank model names, accepted as aliases of the default model
 * (../shared/spec/dialects.md §4.4). rerank-v5.0-pro is named only in cohere-python 7.3.1's
 * docstrings; the v2.0 pair are older clients' defaults.
 */
export const COHERE_RERANK_MODELS = [
  'rerank-v5.0-pro',
  'rerank-v4.0-pro',
  'rerank-v4.0-fast',
  'rerank-v3.5',
  'rerank-english-v3.0',
  'rerank-multilingual-v3.0',
  'rerank-english-v2.0',
  'rerank-multilingual-v2.0',
] as const;

/** Where Cohere serves rerank: v1 (Client.rerank) and v2 (ClientV2.rerank), under https://api.cohere.com. */
export const COHERE_RERANK_V1_PATH = '/v1/rerank';
export const COHERE_RERANK_V2_PATH = '/v2/rerank';

/** A v1 document: a string, or an object of string fields ranked by its `text` or by `rank_fields` (cohere-ai RerankDocument). */
export type CohereRerankDocument = string | Record<string, string>;

/**
 * The v1 request body (cohere-ai 8.1.0 serialization RerankRequest; cohere-python sends an argument
 * given as None as JSON null).
 */
export interface CohereRerankV1Request {
  model?: string | null;
  query: string;
  documents: CohereRerankDocument[];
  top_n?: number | null;
  rank_fields?: string[] | null;
  return_documents?: boolean | null;
  max_chunks_per_doc?: number | null;
}

/** The v2 request body (cohere-ai V2RerankRequest; cohere-python 7 adds relevant_spans): model is required, documents are strings. */
export interface CohereRerankV2Request {
  model: string;
  query: string;
  documents: string[];
  top_n?: number | null;
  max_tokens_per_doc?: number | null;
  priority?: number | null;
  relevant_spans?: Record<string, unknown> | null;
}

export interface CohereRerankResult {
  index: number;
  /** In [0, 1]. */
  relevance_score: number;
  /** Only when return_documents is true (v1; Cohere's own v2 answers without it). */
  document?: { text: string };
}

/** Both versions' answer (cohere-ai RerankResponse, V2RerankResponse): only `results` is required. */
export interface CohereRerankResponse {
  id?: string;
  results: CohereRerankResult[];
  meta?: {
    api_version?: { version: string; is_experimental?: boolean };
    billed_units?: { search_units?: number };
  };
}

/** Where a reply's ranked list sits. */
export const COHERE_RERANK_RESULTS = 'results' satisfies keyof CohereRerankResponse;

/** Cohere's error body (https://docs.cohere.com/reference/errors): the SDKs expose it as `error.body`. */
export interface CohereErrorBody {
  message: string;
}
