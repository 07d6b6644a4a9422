import test, { type ExecutionContext } from 'ava';
import { createAjv, responseValidators } from '../../../src/api/validate.js';
import { sigmoid } from '../../../src/providers/rerank/scores.js';
import { expectErrorResponse } from '../../helpers/faults.js';
import { startGateway } from '../../helpers/gateway.js';
import { JINA_KEY, jinaScore, startFakeJina, type JinaFault } from '../fakes/jina.js';

const validators = responseValidators(createAjv());

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
  const gateway = await startGateway({
    providers: { jina: { type: 'jina', rerankBaseUrl: jina.rerankBaseUrl, apiKey: JINA_KEY, ...provider } },
    rerank: { models: { 'jina-v2': { chain: ['jina'] } } },
    cache: { enabled: false },
    retry: { retries: 0 },
  });
  t.teardown(async () => {
    await gateway.close();
    await jina.close();
  });
  return { jina, gateway };
}

const rerank = (gateway: Awaited<ReturnType<typeof setup>>['gateway'], documents = DOCUMENTS) =>
  gateway.post('/v1/rerank', { model: 'jina-v2', query: QUERY, documents });

/** The ranking the fake's scores imply: best first, ties by index. */
const expectedRanking = (documents: string[], score: (query: string, document: string) => number) =>
  documents
    .map((document, index) => ({ index, relevance_score: score(QUERY, document) }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);

test('POST api.jina.ai/v1/rerank with the configured model; v2 probabilities pass through unchanged', async (t) => {
  const { jina, gateway } = await setup(t);
  const response = await rerank(gateway);
  const body = (await response.json()) as any;
  t.is(response.status, 200, JSON.stringify(body));
  t.true(validators.rerank(body), JSON.stringify(validators.rerank.errors));

  t.is(jina.requests.length, 1);
  const request = jina.requests[0]!;
  t.is(request.method, 'POST');
  t.is(new URL(request.url, 'http://x').pathname, '/api/v1/rerank');
  t.is(request.headers.authorization, `Bearer ${JINA_KEY}`);
  t.deepEqual(request.body, {
    model: 'jina-reranker-v2-base-multilingual',
    query: QUERY,
    documents: DOCUMENTS,
    top_n: DOCUMENTS.length,
    return_documents: false,
  });

  const expected = expectedRanking(DOCUMENTS, jinaScore);
  t.deepEqual(
    body.results.map((result: any) => [result.index, result.relevance_score]),
    expected.map((result) => [result.index, result.relevance_score]),
  );
  t.is(body.results[0].index, 0);
  t.true(body.results.at(-1).relevance_score < 0.1, 'an irrelevant document keeps its low absolute score');
});

test('rerankModel and scoreScale logit: the named model is sent and raw scores go through the sigmoid', async (t) => {
  const { jina, gateway } = await setup(t, { rerankModel: 'jina-reranker-v3', scoreScale: 'logit' });
  const body = (await (await rerank(gateway)).json()) as any;
  t.is(jina.requests[0]!.body.model, 'jina-reranker-v3');
  const expected = expectedRanking(DOCUMENTS, (query, document) => sigmoid(jinaScore(query, document)));
  t.deepEqual(
    body.results.map((result: any) => [result.index, result.relevance_score]),
    expected.map((result) => [result.index, result.relevance_score]),
  );
});

test('maxDocuments splits a request into batches whose absolute scores merge into one ranking', async (t) => {
  const { jina, gateway } = await setup(t, { maxDocuments: 2 });
  const body = (await (await rerank(gateway)).json()) as any;
  t.deepEqual(
    jina.requests.map((request) => request.body.documents),
    [DOCUMENTS.slice(0, 2), DOCUMENTS.slice(2, 4), DOCUMENTS.slice(4)],
  );
  t.deepEqual(
    body.results.map((result: any) => result.index),
    expectedRanking(DOCUMENTS, jinaScore).map((result) => result.index),
  );
});

const FAILURES: Array<{ failure: JinaFault | 'wrong_key'; status: number; retryAfter?: string; mentions: RegExp }> = [
  { failure: 'wrong_key', status: 502, mentions: /jina: HTTP 401: Unauthorized: Invalid API key/ },
  { failure: 'rate_limited', status: 503, retryAfter: '7', mentions: /jina: HTTP 429/ },
  { failure: 'quota', status: 503, mentions: /jina: HTTP 402: Insufficient balance/ },
  { failure: 'quota_in_200', status: 503, mentions: /jina: envelope code 402/ },
  { failure: 'server_error', status: 502, mentions: /jina: HTTP 500/ },
  { failure: 'malformed', status: 502, mentions: /jina: reply is not JSON/ },
  { failure: 'wrong_shape', status: 502, mentions: /jina: reply has a result with an invalid index/ },
  { failure: 'stall', status: 504, mentions: /jina/ },
];

for (const { failure, status, retryAfter, mentions } of FAILURES) {
  test(`rerank failure ${failure} becomes our ${status}, naming the provider but never the key`, async (t) => {
    const overrides = {
      // Only the stall needs a short timeout: a loaded machine may take longer than that to answer.
      ...(failure === 'stall' ? { timeoutMs: 150 } : {}),
      ...(failure === 'wrong_key' ? { apiKey: 'jina_wrong_key_000000' } : {}),
    };
    const { jina, gateway } = await setup(t, overrides);
    if (failure !== 'wrong_key') jina.fail(failure);
    const response = await rerank(gateway);
    const body = await expectErrorResponse(t, gateway, response, status);
    t.regex(body.message, mentions);
    t.is(response.headers.get('retry-after') ?? undefined, retryAfter);
    t.false(JSON.stringify(body).includes(JINA_KEY));
    t.false(gateway.logLines.some((line) => line.includes(JINA_KEY)));
    t.is(jina.requests.length, 1, 'no retry was configured');
  });
}
