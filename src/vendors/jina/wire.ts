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
