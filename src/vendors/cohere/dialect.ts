/**
 * Cohere's rerank API as searchgate serves it to Cohere's clients (the Python and JS SDKs,
 * langchain-cohere, litellm): v1 and v2 under /cohere, and v2 at the root beside LangSearch's
 * /v1/rerank, so that a client pointed at the bare base URL works too
 * (../shared/spec/dialects.md §4.1–4.2). The key is a Bearer key, as Cohere's. Errors keep /v1's
 * statuses and messages in the family's body (§7.1–7.2); Cohere's SDKs pick their error class by
 * status.
 */
import { cohereShapedRerankRoute, rerankFamilyErrors } from '../../dialects/rerank-family.js';
import type { Dialect } from '../../dialects/types.js';
import { COHERE_RERANK_MODELS } from './wire.js';

export const cohereDialect: Dialect = {
  name: 'cohere',
  prefixes: ['/cohere'],
  keys: [{ in: 'bearer' }],
  keyHint: 'send "Authorization: Bearer <API_KEY>"',
  renderError: rerankFamilyErrors,
  rerankModels: COHERE_RERANK_MODELS,
  routes: [
    cohereShapedRerankRoute('/cohere/v1/rerank', '1'),
    cohereShapedRerankRoute('/cohere/v2/rerank', '2'),
    cohereShapedRerankRoute('/v2/rerank', '2'),
  ],
};
