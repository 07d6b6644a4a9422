import test, { type ExecutionContext } from 'ava';
import { expectErrorResponse, rawReply, reply, stall, type Fault } from '../../helpers/faults.js';
import { rankedBy, ranking, rerankGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, rerankCall, type FailureCase } from '../../helpers/upstream-errors.js';
import { COHERE_EXAMPLE, VENDOR_KEY, cohereErrors, cohereScore, startCohereFake } from './fake.js';

async function setup(t: ExecutionContext, options: Record<string, unknown> = {}) {
  const fake = await startCohereFake();
  return { fake, ...(await rerankGateway(t, fake, { type: 'cohere', baseUrl: fake.url, apiKey: VENDOR_KEY, ...options })) };
}

test('sends Cohere v2 the documented request for every document and keeps its relevance scores', async (t) => {
  const { fake, rerank } = await setup(t);
  const response = await rerank({ query: COHERE_EXAMPLE.query, documents: COHERE_EXAMPLE.documents, top_n: 3 });
  t.is(response.status, 200);
  t.deepEqual(
    await ranking(response),
    COHERE_EXAMPLE.reply.results.map((result) => ({ index: result.index, score: result.relevance_score })),
    'the documented scores, unchanged',
  );
  t.is(fake.requests.length, 1);
  const request = fake.requests[0]!;
  t.is(request.method, 'POST');
  t.is(request.url, '/v2/rerank');
  t.is(request.headers.authorization, `Bearer ${VENDOR_KEY}`);
  t.regex(request.headers['content-type'] ?? '', /application\/json/);
  // top_n is every document whatever the client asked: the gateway cuts to top_n itself.
  t.deepEqual(request.body, { model: 'rerank-v3.5', query: COHERE_EXAMPLE.query, documents: COHERE_EXAMPLE.documents, top_n: 5 });
});

test('the model and max_tokens_per_doc options reach Cohere', async (t) => {
  const { fake, rerank } = await setup(t, { model: 'rerank-v4.0-pro', maxTokensPerDoc: 512 });
  t.is((await rerank({ query: 'capital city', documents: ['Paris is the capital city of France'] })).status, 200);
  t.like(fake.requests[0]!.body, { model: 'rerank-v4.0-pro', max_tokens_per_doc: 512, top_n: 1 });
});

test('documents beyond maxDocuments go in batches whose absolute scores merge into one ranking', async (t) => {
  const { fake, rerank } = await setup(t, { maxDocuments: 2 });
  const query = 'solar panels convert sunlight into electricity';
  const documents = [
    'wind turbines make electricity',
    'solar panels convert sunlight into electricity efficiently',
    'a recipe for bread',
    'sunlight and solar energy',
    'panels of judges',
  ];
  const response = await rerank({ query, documents });
  t.is(response.status, 200);
  t.deepEqual(await ranking(response), rankedBy(cohereScore, query, documents));
  t.deepEqual(fake.requests.map((request) => request.body.documents), [documents.slice(0, 2), documents.slice(2, 4), documents.slice(4)]);
  t.deepEqual(fake.requests.map((request) => request.body.top_n), [2, 2, 1], 'each batch asks for all of its documents');
});

test('a batch of irrelevant documents keeps its low scores (no min-max over the batch)', async (t) => {
  const { rerank } = await setup(t, { maxDocuments: 2 });
  const query = 'quantum chromodynamics lattice gauge theory predicts hadron masses from first principles';
  const documents = ['a theory of cooking', 'gardening tips for spring', 'lattice pie crust recipe', 'how to tie shoes'];
  const scores = await ranking(await rerank({ query, documents }));
  t.deepEqual(scores, rankedBy(cohereScore, query, documents));
  t.true(scores.every((result) => result.score < 0.05), JSON.stringify(scores));
});

test("Cohere's documented top_n 3 reply for five documents leaves two unscored: a 502, not a partial ranking", async (t) => {
  const { fake, gateway, rerank } = await setup(t);
  fake.failNext(reply(200, COHERE_EXAMPLE.reply));
  const body = await expectErrorResponse(t, gateway, await rerank({ query: COHERE_EXAMPLE.query, documents: COHERE_EXAMPLE.documents }), 502);
  t.regex(body.message, /up: reply does not score every document/);
});

const failures: Array<FailureCase<string> & { fault: Fault }> = [
  { failure: 'a refused key (401)', fault: cohereErrors.invalidToken, status: 502, kind: 'auth' },
  { failure: 'an invalid token (498)', fault: reply(498, { message: 'invalid token' }), status: 502, kind: 'auth' },
  { failure: 'the per-minute rate limit (429, Retry-After)', fault: cohereErrors.perMinute(7), status: 503, kind: 'rate_limited', retryAfter: '7' },
  { failure: "a trial key's monthly allowance (429)", fault: cohereErrors.trialMonth, status: 503, kind: 'quota' },
  { failure: 'the billing limit (402)', fault: cohereErrors.paymentRequired, status: 503, kind: 'quota' },
  { failure: 'a server error (500)', fault: cohereErrors.serverError, status: 502, kind: 'unavailable' },
  { failure: 'a reply without results', fault: reply(200, { id: 'x', meta: COHERE_EXAMPLE.reply.meta }), status: 502, kind: 'garbage' },
  { failure: 'a reply that is not JSON', fault: rawReply(200, '<html>maintenance</html>', 'text/html'), status: 502, kind: 'garbage' },
  { failure: 'no reply within timeoutMs', fault: stall(), options: { timeoutMs: 150 }, status: 504, kind: 'timeout' },
];

for (const { failure, fault, options, ...expected } of failures) {
  test(`Cohere ${failure} is a ${expected.status} naming the provider, never the key`, async (t) => {
    const { fake, ...running } = await setup(t, options);
    await expectUpstreamError(t, { ...rerankCall(fake, running, fault), secrets: [VENDOR_KEY] }, expected);
  });
}

test('the API key is required by the config schema', async (t) => {
  const fake = await startCohereFake();
  await t.throwsAsync(rerankGateway(t, fake, { type: 'cohere', baseUrl: fake.url }), { message: /apiKey/ });
});
