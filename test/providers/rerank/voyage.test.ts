import test, { type ExecutionContext } from 'ava';
import { expectErrorResponse, metricValue, reply, stall, type Fault } from '../../helpers/faults.js';
import { COHERE_EXAMPLE, VENDOR_KEY, ranking, rerankGateway } from '../fakes/cohere.js';
import { VOYAGE_EXAMPLE, startVoyageFake, voyageErrors, voyageScore } from '../fakes/voyage.js';

async function setup(t: ExecutionContext, options: Record<string, unknown> = {}) {
  const fake = await startVoyageFake();
  t.teardown(() => fake.close());
  const { gateway, rerank } = await rerankGateway(t, { type: 'voyage', baseUrl: fake.url, apiKey: VENDOR_KEY, ...options });
  return { fake, gateway, rerank };
}

const expectedRanking = (query: string, documents: string[]) =>
  documents.map((document, index) => ({ index, score: voyageScore(query, document) })).sort((a, b) => b.score - a.score || a.index - b.index);

test('sends Voyage its documented request (top_k, data) and keeps its relevance scores', async (t) => {
  const { fake, rerank } = await setup(t);
  const response = await rerank({ query: VOYAGE_EXAMPLE.query, documents: VOYAGE_EXAMPLE.documents, top_n: 3 });
  t.is(response.status, 200);
  t.deepEqual(await ranking(response), [
    { index: 4, score: 0.94140625 },
    { index: 2, score: 0.28515625 },
    { index: 1, score: 0.255859375 },
  ]);
  t.is(fake.requests.length, 1);
  const request = fake.requests[0]!;
  t.is(request.method, 'POST');
  t.is(request.url, '/v1/rerank');
  t.is(request.headers.authorization, `Bearer ${VENDOR_KEY}`);
  t.deepEqual(request.body, {
    query: VOYAGE_EXAMPLE.query,
    documents: VOYAGE_EXAMPLE.documents,
    model: 'rerank-2.5',
    top_k: 6,
    return_documents: false,
    truncation: true,
  });
});

test('the model and truncation options reach Voyage', async (t) => {
  const { fake, rerank } = await setup(t, { model: 'rerank-2.5-lite', truncation: false });
  t.is((await rerank({ query: 'capital city', documents: ['Paris is the capital city of France'] })).status, 200);
  t.like(fake.requests[0]!.body, { model: 'rerank-2.5-lite', truncation: false, top_k: 1 });
});

test('documents beyond maxDocuments go in batches whose absolute scores merge into one ranking', async (t) => {
  const { fake, rerank } = await setup(t, { maxDocuments: 3 });
  const query = 'tidal energy from ocean currents';
  const documents = ['ocean tides', 'energy from ocean currents and tidal flows', 'a poem', 'currents of history', 'tidal energy', 'the ocean floor', 'coffee'];
  const response = await rerank({ query, documents });
  t.deepEqual(await ranking(response), expectedRanking(query, documents));
  t.deepEqual(fake.requests.map((request) => request.body.documents), [documents.slice(0, 3), documents.slice(3, 6), documents.slice(6)]);
  t.deepEqual(fake.requests.map((request) => request.body.top_k), [3, 3, 1]);
});

test('a batch of irrelevant documents keeps its low scores (no min-max over the batch)', async (t) => {
  const { rerank } = await setup(t, { maxDocuments: 2 });
  const query = 'photosynthesis chlorophyll absorbs light energy converting carbon dioxide into glucose';
  const documents = ['solar energy stocks', 'a light lunch', 'glucose meters for diabetics', 'football results'];
  const scores = await ranking(await rerank({ query, documents }));
  t.deepEqual(scores, expectedRanking(query, documents));
  t.true(scores.every((result) => result.score < 0.05), JSON.stringify(scores));
});

test('maxDocuments cannot exceed the 1,000 documents Voyage accepts', async (t) => {
  await t.throwsAsync(rerankGateway(t, { type: 'voyage', apiKey: VENDOR_KEY, maxDocuments: 1001 }), { message: /maxDocuments/ });
});

const failures: Array<{ what: string; fault: Fault; status: number; kind: string; retryAfter?: string; options?: Record<string, unknown> }> = [
  { what: 'a refused key (401)', fault: voyageErrors.invalidKey, status: 502, kind: 'auth' },
  { what: 'a forbidden IP (403)', fault: voyageErrors.forbiddenIp, status: 502, kind: 'auth' },
  { what: 'the rate limit (429, Retry-After)', fault: voyageErrors.rateLimited(4), status: 503, kind: 'rate_limited', retryAfter: '4' },
  { what: 'an account out of credit (403)', fault: voyageErrors.outOfCredit, status: 503, kind: 'quota' },
  { what: 'an overloaded server (503)', fault: voyageErrors.unavailable, status: 502, kind: 'unavailable' },
  { what: 'a Cohere-shaped reply (results, not data)', fault: reply(200, COHERE_EXAMPLE.reply), status: 502, kind: 'garbage' },
  { what: 'no reply within timeoutMs', fault: stall(), status: 504, kind: 'timeout', options: { timeoutMs: 150 } },
];

for (const failure of failures) {
  test(`Voyage ${failure.what} is a ${failure.status} naming the provider, never the key`, async (t) => {
    const { fake, gateway, rerank } = await setup(t, failure.options);
    fake.failNext(failure.fault);
    const response = await rerank({ query: 'capital', documents: ['Paris is a capital', 'Lyon'] });
    const retryAfter = response.headers.get('retry-after');
    const body = await expectErrorResponse(t, gateway, response, failure.status);
    t.regex(body.message, /\bup: /);
    t.false(JSON.stringify(body).includes(VENDOR_KEY));
    t.is(retryAfter, failure.retryAfter ?? null);
    t.is(await metricValue(gateway, 'searchgate_upstream_requests_total', { provider: 'up', operation: 'rerank', outcome: failure.kind }), 1);
  });
}
