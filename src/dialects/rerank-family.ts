/**
 * The rerank routes that speak Cohere's body (../shared/spec/dialects.md §4.1–4.2): LangSearch's
 * /v1/rerank, Cohere v1 and v2 (/cohere/v1/rerank, /cohere/v2/rerank, /v2/rerank) and Jina
 * (/jina/v1/rerank). One reader and one renderer serve them all; only the API version in `meta`,
 * v2's required model and the metric label differ.
 *
 * Errors keep /v1's statuses and messages (their clients classify errors by status) and add
 * `detail`, so that LangChain's JinaRerank, which reads `detail` whenever `results` is missing,
 * raises a readable error instead of a KeyError.
 */
import { badRequest, errorBody } from '../api/errors.js';
import { rerankEnvelope } from '../api/envelopes.js';
import type { RerankRequest } from '../api/validate.js';
import { rerankRoute, type DialectFailure, type DialectRoute, type DialectTools, type ErrorReply } from './types.js';

/**
 * How every rerank dialect's reader ends (§3–4): the body in the family's field names (query,
 * documents, model, top_n, return_documents), read by the gateway's one rerank validator (nulls as
 * absent, rerank.maxDocuments, top_n above the document count meaning all) and its model resolved at
 * once, so that a name that is no model is the client's 400 whatever its key (R4), and every
 * vendor's model names work on every route (§4.4).
 */
export function readRerankRequest(body: Record<string, unknown>, tools: DialectTools): RerankRequest {
  const request = tools.validator.parseRerank(body);
  tools.resolveRerankModel(request.model);
  return request;
}

export function rerankFamilyErrors({ error, logId }: DialectFailure): ErrorReply {
  return { status: error.status, body: { ...errorBody(error.status, logId, error.message), detail: error.message } };
}

/**
 * One route of the family at `path`. `apiVersion` '2' requires a model, as Cohere v2 does; `label`
 * names the dialect in metrics when it is not the dialect's own name.
 */
export function cohereShapedRerankRoute(path: string, apiVersion: '1' | '2', label?: string): DialectRoute {
  return rerankRoute({
    operation: 'rerank',
    methods: ['POST'],
    path,
    ...(label ? { label } : {}),
    read(input, tools) {
      if (apiVersion === '2' && (input.body.model === undefined || input.body.model === null)) throw badRequest('invalid request: model is required');
      return { request: readRerankRequest(input.body, tools), echo: null };
    },
    render: ({ request, outcome, logId, units }) => rerankEnvelope(logId, request, outcome, { apiVersion, units }),
    renderError: rerankFamilyErrors,
    docs: {
      summary:
        apiVersion === '1'
          ? 'Rerank: LangSearch, Cohere v1 and Jina bodies; scores in [0, 1], best first'
          : 'Rerank, Cohere v2: model required; scores in [0, 1], best first',
      body: { $ref: '#/components/schemas/RerankRequest' },
      response: { $ref: '#/components/schemas/RerankResponse' },
    },
  });
}
