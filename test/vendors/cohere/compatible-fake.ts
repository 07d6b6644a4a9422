/**
 * A fake of the Cohere/Jina-shaped rerank servers: vLLM by default, Infinity or a LiteLLM proxy by
 * options.
 *
 * Sources:
 * - vLLM docs/serving/openai_compatible_server.md (docs.vllm.ai, "Re-rank API"): POST /rerank,
 *   /v1/rerank, /v2/rerank with {model, query, documents, top_n}; the documented example
 *   (BAAI/bge-reranker-base, "What is the capital of France?") is VLLM_EXAMPLE below, scores
 *   verbatim; reply {id, model, usage: {total_tokens}, results: [{index, document: {text},
 *   relevance_score}]}. With --api-key the server answers 401 {"error": "Unauthorized"}; an unknown
 *   model is 404 {"object": "error", "message": "The model `…` does not exist.", "type":
 *   "NotFoundError", "code": 404}.
 * - michaelfeil/infinity libs/client_infinity …/rerank_input.py and re_rank_result.py: POST /rerank
 *   {query, documents, return_documents, raw_scores, model, top_n}; reply {object: "rerank",
 *   results (older releases: data), model, usage: {prompt_tokens, total_tokens}, id, created};
 *   scores are sigmoid-ed unless raw_scores.
 * - docs.litellm.ai/docs/rerank and BerriAI/litellm proxy auth: a spent budget is
 *   {"error": {"message": "Budget has been exceeded! …", "type": "budget_exceeded", "param": null,
 *   "code": "400"}} with HTTP 400.
 */
import { randomUUID } from 'node:crypto';
import { reply } from '../../helpers/faults.js';
import { sendJson } from '../../helpers/gateway.js';
import { fakeLogit, fakeProbability } from './fake.js';
import { startRerankFake, type RerankFake } from '../../helpers/vendor-fake.js';

export const VLLM_EXAMPLE = {
  model: 'BAAI/bge-reranker-base',
  query: 'What is the capital of France?',
  documents: ['The capital of Brazil is Brasilia.', 'The capital of France is Paris.', 'Horses and cows are both animals'],
  /** The documented scores, by document index. */
  scores: new Map([
    [1, 0.99853515625],
    [0, 0.0005860328674316406],
  ]),
};

export const compatibleErrors = {
  vllmUnauthorized: reply(401, { error: 'Unauthorized' }),
  litellmBudget: reply(400, {
    error: { message: 'Budget has been exceeded! Current cost: 10.02, Max budget: 10.0', type: 'budget_exceeded', param: null, code: '400' },
  }),
  litellmRateLimited: (retryAfterSeconds: number) =>
    reply(429, { error: { message: 'Rate limit exceeded for key', type: 'throttling_error', param: null, code: '429' } }, { 'retry-after': String(retryAfterSeconds) }),
  paymentRequired: reply(402, { error: { message: 'Insufficient credits', type: 'insufficient_quota', param: null, code: '402' } }),
  vllmServerError: reply(500, { object: 'error', message: 'Internal Server Error', type: 'InternalServerError', param: null, code: 500 }),
};

export interface CompatibleFakeOptions {
  /** --api-key of the server; unset: no auth. */
  apiKey?: string;
  /** The model name the server serves. */
  servedModel?: string;
  paths?: string[];
  /** Where the list sits: `results` (vLLM, Infinity, LiteLLM) or `data` (older Infinity). */
  list?: 'results' | 'data';
  /** A server or model that answers raw logits instead of probabilities. */
  logits?: boolean;
}

export function compatibleScore(query: string, document: string, logits = false): number {
  const exampleIndex = query === VLLM_EXAMPLE.query ? VLLM_EXAMPLE.documents.indexOf(document) : -1;
  return VLLM_EXAMPLE.scores.get(exampleIndex) ?? (logits ? fakeLogit(query, document) : fakeProbability(query, document));
}

export function startCompatibleFake(options: CompatibleFakeOptions = {}): Promise<RerankFake> {
  const servedModel = options.servedModel ?? VLLM_EXAMPLE.model;
  return startRerankFake({
    paths: options.paths ?? ['/rerank', '/v1/rerank', '/v2/rerank'],
    notFound: reply(404, { detail: 'Not Found' }),
    refuse: ({ headers }) =>
      options.apiKey === undefined || headers.authorization === `Bearer ${options.apiKey}` ? undefined : compatibleErrors.vllmUnauthorized,
    answer: ({ body }, res) => {
      if (body?.model !== servedModel) {
        return sendJson(res, 404, { object: 'error', message: `The model \`${body?.model}\` does not exist.`, type: 'NotFoundError', param: null, code: 404 });
      }
      const documents = body.documents as string[];
      const results = documents
        .map((document, index) => ({
          index,
          ...(body.return_documents === false ? {} : { document: { text: document } }),
          relevance_score: compatibleScore(body.query, document, options.logits),
        }))
        .sort((a, b) => b.relevance_score - a.relevance_score)
        .slice(0, typeof body.top_n === 'number' ? body.top_n : documents.length);
      sendJson(res, 200, { id: `rerank-${randomUUID().replaceAll('-', '')}`, model: servedModel, usage: { total_tokens: 56 }, [options.list ?? 'results']: results });
    },
  });
}
