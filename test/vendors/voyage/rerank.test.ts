import test, { type ExecutionContext } from 'ava';
import { reply, stall, type Fault } from '../../helpers/faults.js';
import { rankedBy, ranking, rerankGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, rerankCall, type FailureCase } from '../../helpers/upstream-errors.js';
import { COHERE_EXAMPLE, VENDOR_KEY } from '../cohere/fake.js';
import { VOYAGE_EXAMPLE, startVoyageFake, voyageErrors, voyageScore } from './fake.js';

async function setup(t: ExecutionContext, options: Record<string, unknown> = {}) {
  const fake = await startVoyageFake();
  return { fake, ...(await rerankGateway(t, fake, { type: 'voyage', baseUrl: fake.url, apiKey: VENDOR_KEY, ...options })) };
}

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
  t.deepEqual(await ranking(response), rankedBy(voyageScore, query, documents));
  t.deepEqual(fake.requests.map((request) => request.body.documents), [documents.slice(0, 3), documents.slice(3, 6), documents.slice(6)]);
  t.deepEqual(fake.requests.map((request) => request.body.top_k), [3, 3, 1]);
});

test('a batch of irrelevant documents keeps its low scores (no min-max over the batch)', async (t) => {
  const { rerank } = await setup(t, { maxDocuments: 2 });
  const query = 'photosynthesis chlorophyll absorbs light energy converting carbon dioxide into glucose';
  const documents = ['solar energy stocks', 'a light lunch', 'glucose meters for diabetics', 'football results'];
  const scores = await ranking(await rerank({ query, documents }));
  t.deepEqual(scores, rankedBy(voyageScore, query, documents));
  t.true(scores.every((result) => result.score < 0.05), JSON.stringify(scores));
});

test('maxDocuments cannot exceed the 1,000 documents Voyage accepts', async (t) => {
  await t.throwsAsync(rerankGateway(t, null, { type: 'voyage', apiKey: VENDOR_KEY, maxDocuments: 1001 }), { message: /maxDocuments/ });
});

const failures: Array<FailureCase<string> & { fault: Fault }> = [
  { failure: 'a refused key (401)', fault: voyageErrors.invalidKey, status: 502, kind: 'auth' },
  { failure: 'a forbidden IP (403)', fault: voyageErrors.forbiddenIp, status: 502, kind: 'auth' },
  { failure: 'the rate limit (429, Retry-After)', fault: voyageErrors.rateLimited(4), status: 503, kind: 'rate_limited', retryAfter: '4' },
  { failure: 'an account out of credit (403)', fault: voyageErrors.outOfCredit, status: 503, kind: 'quota' },
  { failure: 'an overloaded server (503)', fault: voyageErrors.unavailable, status: 502, kind: 'unavailable' },
  { failure: 'a Cohere-shaped reply (results, not data)', fault: reply(200, COHERE_EXAMPLE.reply), status: 502, kind: 'garbage' },
  { failure: 'no reply within timeoutMs', fault: stall(), options: { timeoutMs: 150 }, status: 504, kind: 'timeout' },
];

for (const { failure, fault, options, ...expected } of failures) {
  test(`Voyage ${failure} is a ${expected.status} naming the provider, never the key`, async (t) => {
    const { fake, ...running } = await setup(t, options);
    await expectUpstreamError(t, { ...rerankCall(fake, running, fault), secrets: [VENDOR_KEY] }, expected);
  });
}
