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
