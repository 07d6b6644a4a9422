/**
 * searchgate's own API, LangSearch's (../shared/spec/web-search-rerank-spec.md): POST /v1/web-search
 * and POST /v1/rerank, with the Bearer key and the spec's error body. Served by the same route
 * handler as every vendor dialect, so that all share one request flow.
 */
import { webSearchEnvelopeText } from '../api/envelopes.js';
import { specErrorReply } from './errors.js';
import { cohereShapedRerankRoute } from './rerank-family.js';
import { searchRoute, type Dialect } from './types.js';

export const langsearchDialect: Dialect = {
  name: 'langsearch',
  prefixes: [],
  keys: [{ in: 'bearer' }],
  keyHint: 'send "Authorization: Bearer <API_KEY>"',
  renderError: specErrorReply,
  // LangSearch's own model name, so that a LangSearch client's explicit model works unchanged.
  rerankModels: ['langsearch-reranker-v1'],
  routes: [
    searchRoute({
      operation: 'search',
      methods: ['POST'],
      path: '/v1/web-search',
      read: (input, tools) => ({ request: tools.validator.parseWebSearch(input.body), echo: null }),
      render: ({ request, outcome, logId, origin }) => webSearchEnvelopeText(logId, request, outcome, `${origin}/v1/`),
      docs: { summary: 'Web search with snippets or full page text' },
    }),
    cohereShapedRerankRoute('/v1/rerank', '1'),
  ],
};
