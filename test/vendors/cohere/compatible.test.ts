import test, { type ExecutionContext } from 'ava';
import { expectErrorResponse, reply, stall, type Fault } from '../../helpers/faults.js';
import { expectRankingCloseTo, rankedBy, ranking, rerankGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, rerankCall, type FailureCase } from '../../helpers/upstream-errors.js';
import { VENDOR_KEY, fakeProbability } from './fake.js';
import { VLLM_EXAMPLE, compatibleErrors, compatibleScore, startCompatibleFake, type CompatibleFakeOptions } from './compatible-fake.js';

async function setup(t: ExecutionContext, options: Record<string, unknown> = {}, server: CompatibleFakeOptions = {}) {
  const fake = await startCompatibleFake(server);
  return { fake, ...(await rerankGateway(t, fake, { type: 'cohere-compatible', baseUrl: fake.url, model: VLLM_EXAMPLE.model, ...options })) };
}

test("sends vLLM's /v1/rerank the Cohere-shaped request and keeps its documented scores", async (t) => {
  const { fake, rerank } = await setup(t);
  const response = await rerank({ query: VLLM_EXAMPLE.query, documents: VLLM_EXAMPLE.documents });
  t.is(response.status, 200);
  const scores = await ranking(response);
  t.deepEqual(scores, rankedBy(compatibleScore, VLLM_EXAMPLE.query, VLLM_EXAMPLE.documents));
  t.deepEqual(scores.find((result) => result.index === 1), { index: 1, score: 0.99853515625 });
  t.deepEqual(scores.find((result) => result.index === 0), { index: 0, score: 0.0005860328674316406 });
  const request = fake.requests[0]!;
  t.is(request.method, 'POST');
  t.is(request.url, '/v1/rerank');
  t.is(request.headers.authorization, undefined, 'no apiKey configured, no Authorization header');
  t.deepEqual(request.body, { model: VLLM_EXAMPLE.model, query: VLLM_EXAMPLE.query, documents: VLLM_EXAMPLE.documents, top_n: 3, return_documents: false });
});

test('without a model option the upstream gets the gateway model id the request resolved to', async (t) => {
  const fake = await startCompatibleFake();
  const { rerank } = await rerankGateway(t, fake, { type: 'cohere-compatible', baseUrl: fake.url }, { config: { rerank: { models: { [VLLM_EXAMPLE.model]: { chain: ['up'] } } } } });
  t.is((await rerank({ query: 'capital', documents: ['Paris is a capital'] })).status, 200, 'service-reranker-v1 is the alias of the only model');
  t.is(fake.requests[0]!.body.model, VLLM_EXAMPLE.model);
});

test("Infinity's /rerank with a Bearer key, its older `data` list read like `results`", async (t) => {
  const query = 'espresso brewing temperature';
  const documents = ['brewing espresso at the right temperature', 'tea ceremonies'];
  for (const list of ['results', 'data'] as const) {
    const { fake, rerank } = await setup(t, { path: '/rerank', apiKey: VENDOR_KEY }, { apiKey: VENDOR_KEY, paths: ['/rerank'], list });
    const response = await rerank({ query, documents });
    t.is(response.status, 200, list);
    t.deepEqual(await ranking(response), rankedBy(compatibleScore, query, documents), list);
    t.is(fake.requests[0]!.url, '/rerank');
    t.is(fake.requests[0]!.headers.authorization, `Bearer ${VENDOR_KEY}`);
  }
});

test("scoreScale 'logit' puts a server's raw logits through the sigmoid", async (t) => {
  const query = 'kubernetes pod scheduling affinity';
  const documents = ['pod affinity rules steer kubernetes scheduling', 'a pod of whales', 'garden scheduling'];
  const { rerank } = await setup(t, { scoreScale: 'logit' }, { logits: true });
  const scores = await ranking(await rerank({ query, documents }));
  expectRankingCloseTo(t, scores, rankedBy(fakeProbability, query, documents));
  t.true(scores.every((result) => result.score > 0 && result.score < 1));
});

test('documents beyond maxDocuments go in batches; a batch of irrelevant documents keeps its low scores', async (t) => {
  const { fake, rerank } = await setup(t, { maxDocuments: 2 });
  const query = 'thermodynamic entropy increases in isolated systems according to the second law';
  const documents = ['isolated islands', 'systems engineering', 'a second helping', 'law school'];
  const scores = await ranking(await rerank({ query, documents }));
  t.deepEqual(scores, rankedBy(compatibleScore, query, documents));
  t.true(scores.every((result) => result.score < 0.05), JSON.stringify(scores));
  t.deepEqual(fake.requests.map((request) => [request.body.documents.length, request.body.top_n]), [[2, 2], [2, 2]]);
});

const failures: Array<FailureCase<string> & { fault: Fault }> = [
  { failure: "vLLM's 401 for a wrong --api-key", fault: compatibleErrors.vllmUnauthorized, options: { apiKey: VENDOR_KEY }, status: 502, kind: 'auth' },
  { failure: "LiteLLM's budget_exceeded (400)", fault: compatibleErrors.litellmBudget, status: 503, kind: 'quota' },
  { failure: 'a 402', fault: compatibleErrors.paymentRequired, status: 503, kind: 'quota' },
  { failure: "LiteLLM's rate limit (429, Retry-After)", fault: compatibleErrors.litellmRateLimited(3), status: 503, kind: 'rate_limited', retryAfter: '3' },
  { failure: "vLLM's 500", fault: compatibleErrors.vllmServerError, status: 502, kind: 'unavailable' },
  { failure: 'a reply with neither results nor data', fault: reply(200, { id: 'rerank-1', model: VLLM_EXAMPLE.model }), status: 502, kind: 'garbage' },
  { failure: 'no reply within timeoutMs', fault: stall(), options: { timeoutMs: 150 }, status: 504, kind: 'timeout' },
];

for (const { failure, fault, options, ...expected } of failures) {
  test(`cohere-compatible: ${failure} is a ${expected.status} naming the provider, never the key`, async (t) => {
    const { fake, ...running } = await setup(t, options);
    await expectUpstreamError(t, { ...rerankCall(fake, running, fault), secrets: [VENDOR_KEY] }, expected);
  });
}

test('a model name the server does not serve is its 404, a 502 that names the model', async (t) => {
  const { gateway, rerank } = await setup(t, { model: 'BAAI/bge-reranker-v2-m3' });
  const body = await expectErrorResponse(t, gateway, await rerank({ query: 'q', documents: ['a'] }), 502);
  t.regex(body.message, /up: HTTP 404: The model `BAAI\/bge-reranker-v2-m3` does not exist/);
});
