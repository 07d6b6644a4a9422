/**
 * A fake of Hugging Face Text Embeddings Inference serving a one-label cross-encoder.
 *
 * Sources (huggingface/text-embeddings-inference):
 * - router/src/http/types.rs: RerankRequest {query, texts, truncate, truncation_direction,
 *   raw_scores, return_text}; RerankResponse is a bare array of Rank {index, text?, score}.
 * - router/src/http/server.rs: POST /rerank (also / on a reranker); `texts` empty → 400
 *   {"error_type":"empty"}; more texts than --max-client-batch-size (32 by default) → 413
 *   "batch size N > maximum allowed batch size M" {"error_type":"validation"}; 422 tokenizer; 424
 *   backend ("Inference failed"); 429 {"error":"Model is overloaded","error_type":"overloaded"};
 *   ranks sorted best first; with --api-key a wrong or missing Authorization is a bare 401.
 * - core/src/infer.rs: unless raw_scores, a one-label model's score goes through a sigmoid.
 * - README "Using Re-rankers models": the example request TEI_EXAMPLE below.
 */
import { reply } from '../../helpers/faults.js';
import { sendJson } from '../../helpers/gateway.js';
import { fakeLogit, fakeProbability } from '../cohere/fake.js';
import { startRerankFake, type RerankFake } from '../../helpers/vendor-fake.js';

export const TEI_EXAMPLE = { query: 'What is Deep Learning?', texts: ['Deep Learning is not...', 'Deep learning is...'] };

export const teiErrors = {
  overloaded: reply(429, { error: 'Model is overloaded', error_type: 'overloaded' }),
  backend: reply(424, { error: 'Inference failed', error_type: 'backend' }),
  unhealthy: reply(503, { error: 'unhealthy', error_type: 'unhealthy' }),
};

export function startTeiFake(options: { apiKey?: string; maxClientBatchSize?: number } = {}): Promise<RerankFake> {
  const maxClientBatchSize = options.maxClientBatchSize ?? 32;
  return startRerankFake({
    paths: ['/rerank', '/'],
    notFound: (_request, res) => {
      res.writeHead(404);
      res.end();
    },
    refuse: ({ headers }) => {
      if (options.apiKey === undefined || headers.authorization === `Bearer ${options.apiKey}`) return undefined;
      return (_request, res) => {
        res.writeHead(401);
        res.end();
      };
    },
    answer: ({ body }, res) => {
      const texts = body?.texts as string[] | undefined;
      if (typeof body?.query !== 'string' || !Array.isArray(texts)) {
        res.writeHead(422, { 'content-type': 'text/plain; charset=utf-8' });
        return res.end('Failed to deserialize the JSON body into the target type: missing field `texts`');
      }
      if (texts.length === 0) return sendJson(res, 400, { error: '`texts` cannot be empty', error_type: 'empty' });
      if (texts.length > maxClientBatchSize) {
        return sendJson(res, 413, {
          error: `batch size ${texts.length} > maximum allowed batch size ${maxClientBatchSize}`,
          error_type: 'validation',
        });
      }
      const ranks = texts
        .map((text, index) => ({
          index,
          ...(body.return_text === true ? { text } : {}),
          score: body.raw_scores === true ? fakeLogit(body.query, text) : fakeProbability(body.query, text),
        }))
        .sort((a, b) => b.score - a.score);
      sendJson(res, 200, ranks);
    },
  });
}
