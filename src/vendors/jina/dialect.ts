/**
 * Jina's rerank API as searchgate serves it to Jina's clients (LangChain's JinaRerank, litellm's
 * jina_ai, which always posts to the root /v1/rerank): POST /jina/v1/rerank, the body and answer of
 * the Cohere v1 family, and `detail` in every error, which JinaRerank reads
 * (../shared/spec/dialects.md §4.1, §6.7).
 */
import { cohereShapedRerankRoute, rerankFamilyErrors } from '../../dialects/rerank-family.js';
import type { Dialect } from '../../dialects/types.js';
import { JINA_RERANK_MODELS } from './wire.js';

export const jinaDialect: Dialect = {
  name: 'jina',
  prefixes: ['/jina'],
  keys: [{ in: 'bearer' }],
  keyHint: 'send "Authorization: Bearer <API_KEY>"',
  renderError: rerankFamilyErrors,
  rerankModels: JINA_RERANK_MODELS,
  routes: [cohereShapedRerankRoute('/jina/v1/rerank', '1')],
};
