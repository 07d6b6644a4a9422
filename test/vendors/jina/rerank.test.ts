import test, { type ExecutionContext } from 'ava';
import { sigmoid } from '../../../src/providers/rerank.js';
import { validators } from '../../helpers/faults.js';
import { rankedBy, ranking, rerankGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, type FailureCase } from '../../helpers/upstream-errors.js';
import { JINA_KEY, jinaScore, startFakeJina, type JinaFault } from './fake.js';
import { pathOf } from '../../helpers/vendor-fake.js';

/** The documented example of jina.ai/reranker, shortened. */
const QUERY = 'Organic skincare products for sensitive skin';
const DOCUMENTS = [
  'Organic skincare for sensitive skin with aloe vera and chamomile.',
  'New makeup trends focus on bold colors and innovative techniques',
  'Bio-Hautpflege für empfindliche Haut mit Aloe Vera und Kamille',
  'Natural organic products for sensitive skin care',
  'Sensitive skin needs gentle products',
];

async function setup(t: ExecutionContext, provider: Record<string, unknown> = {}) {
  const jina = await startFakeJina();
  const { gateway, rerank } = await rerankGateway(t, jina, { type: 'jina', rerankBaseUrl: jina.rerankBaseUrl, apiKey: JINA_KEY, ...provider }, { name: 'jina', model: 'jina-v2' });
  return { jina, gateway, rerank: (documents = DOCUMENTS) => rerank({ query: QUERY, documents }) };
}

test('POST api.jina.ai/v1/rerank with the configured model; v2 probabilities pass through unchanged', async (t) => {
  const { jina, rerank } = await setup(t);
  const response = await rerank();
  const body = (await response.json()) as any;
  t.is(response.status, 200, JSON.stringify(body));
  t.true(validators.rerank(body), JSON.stringify(validators.rerank.errors));

  t.is(jina.requests.length, 1);
  const request = jina.requests[0]!;
  t.is(request.method, 'POST');
  t.is(pathOf(request), '/api/v1/rerank');
  t.is(request.headers.authorization, `Bearer ${JINA_KEY}`);
  t.deepEqual(request.body, {
    model: 'jina-reranker-v2-base-multilingual',
    query: QUERY,
    documents: DOCUMENTS,
    top_n: DOCUMENTS.length,
    return_documents: false,
  });

  t.deepEqual(
    body.results.map((result: any) => [result.index, result.relevance_score]),
    rankedBy(jinaScore, QUERY, DOCUMENTS).map((result) => [result.index, result.score]),
  );
  t.is(body.results[0].index, 0);
  t.true(body.results.at(-1).relevance_score < 0.1, 'an irrelevant document keeps its low absolute score');
});

test('rerankModel and scoreScale logit: the named model is sent and raw scores go through the sigmoid', async (t) => {
  const { jina, rerank } = await setup(t, { rerankModel: 'jina-reranker-v3', scoreScale: 'logit' });
  const scores = await ranking(await rerank());
  t.is(jina.requests[0]!.body.model, 'jina-reranker-v3');
  t.deepEqual(
    scores,
    rankedBy((query, document) => sigmoid(jinaScore(query, document)), QUERY, DOCUMENTS),
  );
});

test('maxDocuments splits a request into batches whose absolute scores merge into one ranking', async (t) => {
  const { jina, rerank } = await setup(t, { maxDocuments: 2 });
  const scores = await ranking(await rerank());
  t.deepEqual(
    jina.requests.map((request) => request.body.documents),
    [DOCUMENTS.slice(0, 2), DOCUMENTS.slice(2, 4), DOCUMENTS.slice(4)],
  );
  t.deepEqual(
    scores.map((result) => result.index),
    rankedBy(jinaScore, QUERY, DOCUMENTS).map((result) => result.index),
  );
});

const WRONG_KEY = 'jina_wrong_key_000000';

const FAILURES: Array<FailureCase<JinaFault | 'wrong_key'>> = [
  { failure: 'wrong_key', options: { apiKey: WRONG_KEY }, status: 502, kind: 'auth', mentions: /jina: HTTP 401: Unauthorized: Invalid API key/ },
  { failure: 'rate_limited', status: 503, kind: 'rate_limited', retryAfter: '7', mentions: /jina: HTTP 429/ },
  { failure: 'quota', status: 503, kind: 'quota', mentions: /jina: HTTP 402: Insufficient balance/ },
  { failure: 'quota_in_200', status: 503, kind: 'quota', mentions: /jina: envelope code 402/ },
  { failure: 'server_error', status: 502, kind: 'unavailable', mentions: /jina: HTTP 500/ },
  { failure: 'malformed', status: 502, kind: 'garbage', mentions: /jina: reply is not JSON/ },
  { failure: 'wrong_shape', status: 502, kind: 'garbage', mentions: /jina: reply has a result with an invalid index/ },
  { failure: 'stall', options: { timeoutMs: 150 }, status: 504, kind: 'timeout', mentions: /jina/ },
];

for (const { failure, options, ...expected } of FAILURES) {
  test(`rerank failure ${failure} becomes our ${expected.status}, naming the provider but never the key`, async (t) => {
    const { jina, gateway, rerank } = await setup(t, options);
    const fail = () => failure !== 'wrong_key' && jina.fail(failure);
    const call = { gateway, provider: 'jina', operation: 'rerank' as const, secrets: [JINA_KEY, WRONG_KEY], requests: jina.requests, fail, send: () => rerank() };
    await expectUpstreamError(t, call, expected);
  });
}
