/**
 * Voyage AI's rerank API as searchgate serves it to Voyage's clients (../shared/spec/dialects.md
 * §4.3, §6.4, §6.8, §7.3): POST /voyage/v1/rerank with a Bearer key. Point voyageai at it with
 * `voyageai.Client(api_key=KEY, base_url=BASE + "/voyage/v1")`, litellm with
 * `api_base=BASE + "/voyage"` (it appends /v1/rerank).
 *
 * `model` is required, as Voyage's: any configured model id, or any vendor's model name as an alias
 * (§4.4). `top_k` is top_n; `truncation` is accepted and changes nothing, since searchgate windows
 * long documents instead of cutting or refusing them (§3). Scores are searchgate's, in [0, 1], best
 * first. `usage.total_tokens` is the answering provider's count when it reports one (a Voyage or Jina
 * upstream), else 0, meaning "not measured" (R6); voyageai fails on an answer without it.
 *
 * Errors are Voyage's `{"detail": M}`, which is all the SDK reads; a 401 starts with Voyage's
 * sentence, every other failure (a disabled account's 403 included) keeps /v1's status and message
 * (§7.3). Voyage's wire format and its sources are in wire.ts.
 */
import { rerankResults } from '../../api/envelopes.js';
import { tabledFailure, type ErrorTable } from '../../dialects/error-table.js';
import { readBody, type ParameterSchema } from '../../dialects/params.js';
import { readRerankRequest } from '../../dialects/rerank-family.js';
import { rerankRoute, type Dialect, type DialectFailure, type ErrorReply } from '../../dialects/types.js';
import {
  VOYAGE_AUTH_MESSAGES,
  VOYAGE_MAX_DOCUMENTS,
  VOYAGE_RERANK_MODELS,
  type VoyageErrorBody,
  type VoyageRerankRequest,
  type VoyageRerankResponse,
} from './wire.js';

/** Voyage's request (https://docs.voyageai.com/reference/reranker-api); null in any field is "not given" (R5). */
const requestSchema = {
  type: 'object',
  required: ['query', 'documents', 'model'],
  properties: {
    query: { type: 'string', description: 'The query to score documents against.' },
    documents: {
      type: 'array',
      minItems: 1,
      maxItems: VOYAGE_MAX_DOCUMENTS,
      items: { type: 'string' },
      description: `The texts to rank: at most ${VOYAGE_MAX_DOCUMENTS}, as Voyage, and at most rerank.maxDocuments.`,
    },
    model: {
      type: 'string',
      minLength: 1,
      description: 'A configured reranker id, service-reranker-v1, or a Voyage, Cohere or Jina model name (rerank-2.5…), which means the default model.',
    },
    top_k: { type: 'integer', minimum: 1, description: 'How many of the best to return; default all.' },
    return_documents: { type: 'boolean', default: false, description: "Whether each result carries its document's text." },
    truncation: { type: 'boolean', default: true, description: 'Accepted; no effect: long documents are windowed, never cut or refused.' },
  },
} as const satisfies ParameterSchema;

const responseSchema = {
  type: 'object',
  required: ['object', 'data', 'model', 'usage'],
  properties: {
    object: { const: 'list' },
    data: {
      type: 'array',
      description: 'Best first; ties keep document order.',
      items: {
        type: 'object',
        required: ['index', 'relevance_score'],
        properties: {
          index: { type: 'integer', minimum: 0 },
          relevance_score: { type: 'number', minimum: 0, maximum: 1 },
          document: { type: 'string', description: 'Only when return_documents is true.' },
        },
      },
    },
    model: { type: 'string', description: 'The searchgate model that scored, not the alias asked for.' },
    usage: {
      type: 'object',
      required: ['total_tokens'],
      properties: { total_tokens: { type: 'integer', minimum: 0, description: "The upstream's count when it reports one; 0: not measured." } },
    },
  },
} as const;

/** §7.3: a 401 starts with Voyage's sentence; every other failure keeps /v1's status and message. */
const ERROR_TABLE: ErrorTable = {
  missing_key: { canonical: VOYAGE_AUTH_MESSAGES.missingKey },
  invalid_key: { canonical: VOYAGE_AUTH_MESSAGES.invalidKey },
};

function voyageErrors(failure: DialectFailure): ErrorReply {
  const { status, message, reason } = tabledFailure(ERROR_TABLE, failure);
  const body: VoyageErrorBody = { detail: message };
  return { status, body, reason };
}

export const voyageDialect: Dialect = {
  name: 'voyage',
  prefixes: ['/voyage'],
  keys: [{ in: 'bearer' }],
  keyHint: 'send "Authorization: Bearer <API_KEY>"',
  renderError: voyageErrors,
  rerankModels: VOYAGE_RERANK_MODELS,
  routes: [
    rerankRoute({
      operation: 'rerank',
      methods: ['POST'],
      path: '/voyage/v1/rerank',
      read(input, tools) {
        const { query, documents, model, top_k, return_documents } = readBody<VoyageRerankRequest>(requestSchema, input.body);
        const request = readRerankRequest({ query, documents, model, top_n: top_k, return_documents }, tools);
        return { request, echo: null };
      },
      render: ({ request, outcome }): VoyageRerankResponse => ({
        object: 'list',
        data: rerankResults(request, outcome).map(({ index, relevance_score, document }) => ({
          index,
          relevance_score,
          ...(document ? { document: document.text } : {}),
        })),
        model: outcome.model,
        usage: { total_tokens: outcome.totalTokens ?? 0 },
      }),
      docs: { summary: 'Rerank, Voyage AI: model required; scores in [0, 1], best first', body: requestSchema, response: responseSchema },
    }),
  ],
};
