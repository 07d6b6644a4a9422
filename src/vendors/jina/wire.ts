/**
 * Jina AI's wire format, both directions: what searchgate sends Jina's hosts (client.ts, search.ts,
 * reader.ts, rerank.ts) and what it answers Jina's clients (dialect.ts).
 */

/**
 * Jina's rerank model names, accepted as aliases of the default model (../shared/spec/dialects.md
 * §4.4): https://jina.ai/models/jina-reranker-v3 and its related models; jina-reranker-v1-base-en is
 * LangChain JinaRerank's default; the v1 and ColBERT names are in clients' enums.
 */
export const JINA_RERANK_MODELS = [
  'jina-reranker-v3',
  'jina-reranker-m0',
  'jina-reranker-v2-base-multilingual',
  'jina-reranker-v1-base-en',
  'jina-reranker-v1-turbo-en',
  'jina-reranker-v1-tiny-en',
  'jina-colbert-v2',
  'jina-colbert-v1-en',
] as const;

/** Where api.jina.ai serves rerank. */
export const JINA_RERANK_PATH = '/v1/rerank';

/**
 * A rerank document: a string, `{text}`, or for jina-reranker-m0 `{image}` (a URL or base64), which
 * searchgate refuses since it ranks text (https://jina.ai/reranker; ../shared/spec/dialects.md §4.4).
 */
export type JinaRerankDocument = string | { text: string } | { image: string };

/** The request body (https://jina.ai/reranker; LangChain JinaRerank sends model, query, documents, top_n, which may be null). */
export interface JinaRerankRequest {
  model: string;
  query: string;
  documents: JinaRerankDocument[];
  top_n?: number | null;
  /** Jina's default is true: each result then carries its document. */
  return_documents?: boolean | null;
}

export interface JinaRerankResult {
  index: number;
  relevance_score: number;
  document?: { text: string };
}

/** The answer (jina-reranker-v2-base-multilingual's model card and jina.ai/reranker): best first. */
export interface JinaRerankResponse {
  model: string;
  usage: { total_tokens: number };
  results: JinaRerankResult[];
}

/** Where a reply's ranked list sits. */
export const JINA_RERANK_RESULTS = 'results' satisfies keyof JinaRerankResponse;

/**
 * api.jina.ai's error body: FastAPI's `detail`, a sentence or a list of validation errors.
 * LangChain's JinaRerank raises RuntimeError(detail) for any answer without `results`.
 */
export interface JinaRerankErrorBody {
  detail: string | Array<{ loc: Array<string | number>; msg: string; type: string }>;
}
