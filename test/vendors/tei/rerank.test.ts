import test, { type ExecutionContext } from 'ava';
import { expectErrorResponse, reply, stall, type Fault } from '../../helpers/faults.js';
import { expectRankingCloseTo, rankedBy, ranking, rerankGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, rerankCall, type FailureCase } from '../../helpers/upstream-errors.js';
import { VENDOR_KEY, fakeProbability } from '../cohere/fake.js';
import { TEI_EXAMPLE, startTeiFake, teiErrors } from './fake.js';

async function setup(t: ExecutionContext, options: Record<string, unknown> = {}, server: Parameters<typeof startTeiFake>[0] = {}) {
  const fake = await startTeiFake(server);
  return { fake, ...(await rerankGateway(t, fake, { type: 'tei', baseUrl: fake.url, ...options })) };
}

test("sends TEI's /rerank its request and reads the bare array of scores", async (t) => {
  const { fake, rerank } = await setup(t);
  const response = await rerank({ query: TEI_EXAMPLE.query, documents: TEI_EXAMPLE.texts });
  t.is(response.status, 200);
  t.deepEqual(await ranking(response), rankedBy(fakeProbability, TEI_EXAMPLE.query, TEI_EXAMPLE.texts));
  const request = fake.requests[0]!;
  t.is(request.method, 'POST');
  t.is(request.url, '/rerank');
  t.is(request.headers.authorization, undefined, 'no apiKey configured, no Authorization header');
  t.deepEqual(request.body, { query: TEI_EXAMPLE.query, texts: TEI_EXAMPLE.texts, raw_scores: false, return_text: false, truncate: true });
});

test("TEI's --api-key is sent as a Bearer token; a wrong one is a 502 that does not show it", async (t) => {
  const { fake, rerank } = await setup(t, { apiKey: VENDOR_KEY }, { apiKey: VENDOR_KEY });
  t.is((await rerank({ query: 'q', documents: ['a'] })).status, 200);
  t.is(fake.requests[0]!.headers.authorization, `Bearer ${VENDOR_KEY}`);

  const { fake: wrongFake, ...wrong } = await setup(t, { apiKey: 'not-the-key-123' }, { apiKey: VENDOR_KEY });
  const call = { ...wrong, operation: 'rerank' as const, requests: wrongFake.requests, secrets: ['not-the-key-123', VENDOR_KEY], send: () => wrong.rerank({ query: 'q', documents: ['a'] }) };
  await expectUpstreamError(t, call, { status: 502, kind: 'auth', mentions: /up: HTTP 401/ });
});

test('by default 40 documents go to TEI as batches of 32 and 8, merged into one ranking', async (t) => {
  const { fake, rerank } = await setup(t);
  const query = 'distributed consensus algorithms raft paxos';
  const documents = Array.from({ length: 40 }, (_, i) =>
    i % 5 === 0 ? `raft consensus note ${i}` : i % 7 === 0 ? `paxos and raft distributed consensus algorithms ${i}` : `unrelated note ${i}`,
  );
  const response = await rerank({ query, documents });
  t.is(response.status, 200);
  expectRankingCloseTo(t, await ranking(response), rankedBy(fakeProbability, query, documents));
  t.deepEqual(fake.requests.map((request) => request.body.texts.length), [32, 8]);
});

test("a maxDocuments above the server's --max-client-batch-size is TEI's 413, reported as a 502 that says why", async (t) => {
  const { gateway, rerank } = await setup(t, { maxDocuments: 40 }, { maxClientBatchSize: 32 });
  const response = await rerank({ query: 'q', documents: Array.from({ length: 40 }, (_, i) => `document ${i}`) });
  const body = await expectErrorResponse(t, gateway, response, 502);
  t.regex(body.message, /up: HTTP 413: batch size 40 > maximum allowed batch size 32/);
});

test('rawScores asks TEI for logits and applies the sigmoid here: the same scores as TEI applying it', async (t) => {
  const query = 'vector database approximate nearest neighbour search';
  const documents = ['approximate nearest neighbour search in a vector database', 'nearest bakery', 'a database of recipes'];
  const raw = await setup(t, { rawScores: true });
  const rawRanking = await ranking(await raw.rerank({ query, documents }));
  t.is(raw.fake.requests[0]!.body.raw_scores, true);
  t.true(raw.fake.requests.length === 1);
  expectRankingCloseTo(t, rawRanking, rankedBy(fakeProbability, query, documents));
  t.true(rawRanking.every((result) => result.score > 0 && result.score < 1));
});

test('a batch of irrelevant documents keeps its low scores (no min-max over the batch)', async (t) => {
  const { rerank } = await setup(t, { maxDocuments: 2, rawScores: true });
  const query = 'mitochondrial electron transport chain oxidative phosphorylation produces adenosine triphosphate';
  const documents = ['the transport ministry', 'chain restaurants', 'a poem about rain', 'bicycle chain oil'];
  const scores = await ranking(await rerank({ query, documents }));
  expectRankingCloseTo(t, scores, rankedBy(fakeProbability, query, documents));
  t.true(scores.every((result) => result.score < 0.05), JSON.stringify(scores));
});

const failures: Array<FailureCase<string> & { fault: Fault }> = [
  { failure: '"Model is overloaded" (429)', fault: teiErrors.overloaded, status: 503, kind: 'rate_limited' },
  { failure: 'a backend failure (424)', fault: teiErrors.backend, status: 502, kind: 'unavailable' },
  { failure: 'an unhealthy server (503)', fault: teiErrors.unhealthy, status: 502, kind: 'unavailable' },
  { failure: 'an object instead of the array of ranks', fault: reply(200, { results: [{ index: 0, score: 0.9 }] }), status: 502, kind: 'garbage' },
  { failure: 'ranks without scores', fault: reply(200, [{ index: 0, relevance_score: 0.9 }]), status: 502, kind: 'garbage' },
  { failure: 'no reply within timeoutMs', fault: stall(), options: { timeoutMs: 150 }, status: 504, kind: 'timeout' },
];

for (const { failure, fault, options, ...expected } of failures) {
  test(`TEI ${failure} is a ${expected.status} naming the provider`, async (t) => {
    const { fake, ...running } = await setup(t, options);
    await expectUpstreamError(t, { ...rerankCall(fake, running, fault, ['Paris is a capital']), secrets: [] }, expected);
  });
}

test('baseUrl is required: TEI is self-hosted', async (t) => {
  await t.throwsAsync(rerankGateway(t, null, { type: 'tei' }), { message: /baseUrl/ });
});
