/**
 * The root rerank routes widened for the vendors' clients (../shared/spec/dialects.md §4.1–4.2,
 * §4.4, R13, §7.1): LangSearch's POST /v1/rerank also takes Cohere v1 and Jina bodies (litellm's
 * jina_ai always lands there) and the vendors' model names, and answers with Cohere's `id` and
 * `meta`; POST /v2/rerank serves Cohere v2 clients pointed at the bare base URL. Model names resolve
 * through config's dialects.rerankAliases first.
 */
import test from 'ava';
import { expectErrorResponse } from '../helpers/faults.js';
import { startGateway } from '../helpers/gateway.js';
import { VENDOR_KEY, startCohereFake } from '../vendors/cohere/fake.js';
import {
  BANANAS,
  DOCUMENTS,
  ERROR_ROWS,
  PARIS,
  QUERY,
  checkErrorRow,
  dialectGateway,
  expectFamilyAnswer,
  requestsCounted,
} from '../vendors/rerank-dialect-helpers.js';

const V1 = '/v1/rerank';
const V2 = '/v2/rerank';

test('/v1/rerank keeps the LangSearch body and answer, with Cohere\'s id and meta added; it counts as "langsearch", /v2/rerank as "cohere"', async (t) => {
  const { gateway, post } = await dialectGateway(t);
  await expectFamilyAnswer(t, await post(V1, { query: QUERY, documents: DOCUMENTS }), { version: '1' });
  await expectFamilyAnswer(t, await post(V2, { model: 'rerank-v3.5', query: QUERY, documents: DOCUMENTS }), { version: '2' });
  t.is(await requestsCounted(gateway, 'langsearch', V1), 1);
  t.is(await requestsCounted(gateway, 'cohere', V2), 1);
});

test('/v1/rerank takes a Cohere v1 body: {text} and rank_fields documents, max_chunks_per_doc and nulls accepted', async (t) => {
  const { post, upstream } = await dialectGateway(t);
  const response = await post(V1, {
    model: 'rerank-english-v3.0',
    query: QUERY,
    documents: [{ text: BANANAS }, { title: 'Paris', text: PARIS }],
    rank_fields: ['title', 'text'],
    max_chunks_per_doc: 10,
    max_tokens_per_doc: null,
    top_n: null,
    return_documents: true,
  });
  const texts = [`text: ${BANANAS}`, `title: Paris\ntext: ${PARIS}`];
  await expectFamilyAnswer(t, response, { version: '1', ranked: [1, 0], documents: [texts[1]!, texts[0]!] });
  t.deepEqual(upstream.requests[0]!.body.documents, texts);
});

test("/v1/rerank takes JinaRerank's body (top_n null) and litellm's jina_ai body (return_documents true); an m0 image is a 400", async (t) => {
  const { gateway, post } = await dialectGateway(t);
  await expectFamilyAnswer(t, await post(V1, { model: 'jina-reranker-v1-base-en', query: QUERY, documents: DOCUMENTS, top_n: null }), { version: '1' });
  const litellm = await post(V1, { model: 'jina-reranker-v2-base-multilingual', query: QUERY, documents: DOCUMENTS, top_n: 1, return_documents: true });
  await expectFamilyAnswer(t, litellm, { version: '1', ranked: [1], documents: [PARIS] });
  const image = await post(V1, { model: 'jina-reranker-m0', query: QUERY, documents: [{ image: 'https://example.org/paris.png' }] });
  t.is((await expectErrorResponse(t, gateway, image, 400)).message, 'documents[0] is an image; searchgate ranks text documents only');
});

test('/v2/rerank needs a model, as Cohere v2; /v1/rerank does not', async (t) => {
  const { gateway, post } = await dialectGateway(t);
  t.is((await expectErrorResponse(t, gateway, await post(V2, { query: QUERY, documents: DOCUMENTS }), 400)).message, 'invalid request: model is required');
  t.is((await post(V1, { query: QUERY, documents: DOCUMENTS })).status, 200);
});

/**
 * Two models: service-reranker-v1 served by Voyage's fake (`up`), `strict` by Cohere's (`judge`);
 * config maps a house name, and one of Voyage's names, to `strict`.
 */
async function aliasedGateway(t: Parameters<typeof dialectGateway>[0]) {
  const judge = await startCohereFake();
  t.teardown(() => judge.close());
  const setup = await dialectGateway(t, {
    providers: { judge: { type: 'cohere', baseUrl: judge.url, apiKey: VENDOR_KEY } },
    config: {
      rerank: { models: { 'service-reranker-v1': { chain: ['up'] }, strict: { chain: ['judge'] } } },
      dialects: { rerankAliases: { 'House-Reranker': 'strict', 'rerank-2.5': 'strict' } },
    },
  });
  return { ...setup, judge };
}

test('a dialects.rerankAliases name means its configured model, in any case and with stray spaces, on every route; the answer names that model (R13)', async (t) => {
  const { post, judge, upstream } = await aliasedGateway(t);
  for (const [path, body] of [
    [V1, { model: ' house-reranker ', query: QUERY, documents: DOCUMENTS }],
    [V2, { model: 'HOUSE-RERANKER', query: QUERY, documents: DOCUMENTS }],
    ['/jina/v1/rerank', { model: 'house-reranker', query: QUERY, documents: DOCUMENTS }],
  ] as const) {
    await expectFamilyAnswer(t, await post(path, body), { version: path === V2 ? '2' : '1', model: 'strict' });
  }
  const voyage = (await (await post('/voyage/v1/rerank', { model: 'House-Reranker', query: QUERY, documents: DOCUMENTS })).json()) as any;
  t.is(voyage.model, 'strict');
  t.deepEqual(voyage.usage, { total_tokens: 0 }, "strict's provider (Cohere) reports no count");
  t.is(judge.requests.length, 4);
  t.is(upstream.requests.length, 0);
});

test('config wins over a vendor name it maps elsewhere; the other vendor names and service-reranker-v1 keep meaning the default model', async (t) => {
  const { post, judge, upstream } = await aliasedGateway(t);
  await expectFamilyAnswer(t, await post(V1, { model: 'Rerank-2.5', query: QUERY, documents: DOCUMENTS }), { version: '1', model: 'strict' });
  await expectFamilyAnswer(t, await post(V1, { model: 'strict', query: QUERY, documents: DOCUMENTS }), { version: '1', model: 'strict' });
  t.is(judge.requests.length, 2);
  for (const model of ['rerank-2.5-lite', 'rerank-v3.5', 'service-reranker-v1']) {
    await expectFamilyAnswer(t, await post(V1, { model, query: QUERY, documents: DOCUMENTS }), { version: '1', model: 'service-reranker-v1' });
  }
  t.is(upstream.requests.length, 3);
});

test("LangSearch's own model name langsearch-reranker-v1 is an alias of the default model (§4.4)", async (t) => {
  const { post } = await dialectGateway(t);
  await expectFamilyAnswer(t, await post(V1, { model: 'langsearch-reranker-v1', query: QUERY, documents: DOCUMENTS }), { version: '1' });
});

test('a dialects.rerankAliases entry naming no configured model stops the start', async (t) => {
  await t.throwsAsync(
    startGateway({
      rerank: { models: { 'service-reranker-v1': { chain: ['local-reranker'] } } },
      dialects: { rerankAliases: { 'house-reranker': 'no-such-model' } },
    }),
    { message: /dialects\.rerankAliases\.house-reranker: no model named "no-such-model" under rerank\.models/ },
  );
});

test('meta.billed_units.search_units on /v1/rerank is the units charged: 2 at weights.rerank 2 for an account key, 0 for an operator key', async (t) => {
  const { post, account } = await dialectGateway(t, { accounts: { weights: { rerank: 2 } } });
  const { key } = await account();
  const charged = await post(V1, { query: QUERY, documents: DOCUMENTS }, key);
  t.is(charged.headers.get('x-ratelimit-remaining'), '98');
  await expectFamilyAnswer(t, charged, { version: '1', units: 2 });
  await expectFamilyAnswer(t, await post(V1, { query: QUERY, documents: DOCUMENTS }), { version: '1', units: 0 });
});

for (const row of ERROR_ROWS) {
  test(`§7.1 ${row.condition} on /v1/rerank: ${row.status} in the family body {code, log_id, message, msg, detail}`, async (t) => {
    await checkErrorRow(t, row, [{ path: V1, body: { query: QUERY, documents: DOCUMENTS } }], async (gateway, response) =>
      (await expectErrorResponse(t, gateway, response, row.status)).message,
    );
  });
}
