/**
 * The Jina dialect over HTTP (../shared/spec/dialects.md §4.1, §4.4, §6.7 JinaRerank, §6.8, §7.1):
 * POST /jina/v1/rerank with the bodies of LangChain's JinaRerank and litellm's jina_ai, in front of a
 * vendor fake through searchgate's own provider for it.
 */
import test from 'ava';
import { JINA_RERANK_MODELS } from '../../../src/vendors/jina/wire.js';
import { expectErrorResponse } from '../../helpers/faults.js';
import {
  DOCUMENTS,
  ERROR_ROWS,
  PARIS,
  QUERY,
  checkErrorRow,
  dialectGateway,
  expectFamilyAnswer,
  requestsCounted,
} from '../rerank-dialect-helpers.js';

const ROUTE = '/jina/v1/rerank';

test('JinaRerank\'s body ("top_n": null, its default model) ranks every document, without documents, in the family body', async (t) => {
  const { gateway, post } = await dialectGateway(t);
  await expectFamilyAnswer(t, await post(ROUTE, { query: QUERY, documents: DOCUMENTS, model: 'jina-reranker-v1-base-en', top_n: null }), { version: '1' });
  t.is(await requestsCounted(gateway, 'jina', ROUTE), 1, 'counted under the dialect label "jina"');
});

test("litellm's jina_ai body (return_documents true, top_n) and {text} documents: each result carries its document as {text}", async (t) => {
  const { post } = await dialectGateway(t);
  const documents = DOCUMENTS.map((text) => ({ text }));
  const response = await post(ROUTE, { model: 'jina-reranker-v2-base-multilingual', query: QUERY, documents, top_n: 2, return_documents: true });
  await expectFamilyAnswer(t, response, { version: '1', ranked: [1, 2], documents: [PARIS, DOCUMENTS[2]!] });
});

test('a jina-reranker-m0 image document is a 400 in the family body: searchgate ranks text, and asks no upstream', async (t) => {
  const { gateway, post, upstream } = await dialectGateway(t);
  const response = await post(ROUTE, {
    model: 'jina-reranker-m0',
    query: QUERY,
    documents: [{ text: PARIS }, { image: 'https://example.org/eiffel-tower.png' }],
  });
  const body = await expectErrorResponse(t, gateway, response, 400);
  t.is(body.message, 'documents[1] is an image; searchgate ranks text documents only');
  t.is(upstream.requests.length, 0);
});

test("every Jina model name, in any case and with stray spaces, is an alias of the default model, which the answer names", async (t) => {
  const { post } = await dialectGateway(t);
  for (const name of [...JINA_RERANK_MODELS, ' JINA-RERANKER-V2-BASE-MULTILINGUAL', 'rerank-v3.5', 'rerank-2.5']) {
    const response = await post(ROUTE, { model: name, query: QUERY, documents: [PARIS] });
    t.is(response.status, 200, name);
    t.is(((await response.json()) as { model: string }).model, 'service-reranker-v1', name);
  }
});

test('meta.billed_units.search_units is the units charged: 2 for an account key at weights.rerank 2, 0 for an operator key', async (t) => {
  const { post, account } = await dialectGateway(t, { accounts: { weights: { rerank: 2 } } });
  const { key } = await account();
  const body = { model: 'jina-reranker-v1-base-en', query: QUERY, documents: DOCUMENTS };
  const charged = await post(ROUTE, body, key);
  t.is(charged.headers.get('x-ratelimit-remaining'), '98');
  await expectFamilyAnswer(t, charged, { version: '1', units: 2 });
  await expectFamilyAnswer(t, await post(ROUTE, body), { version: '1', units: 0 });
});

for (const row of ERROR_ROWS) {
  test(`§7.1 ${row.condition}: ${row.status} in the family body, its message also in detail (JinaRerank reads it)`, async (t) => {
    const routes = [{ path: ROUTE, body: { model: 'jina-reranker-v1-base-en', query: QUERY, documents: DOCUMENTS, top_n: 3 } }];
    await checkErrorRow(t, row, routes, async (gateway, response) => (await expectErrorResponse(t, gateway, response, row.status)).message);
  });
}

test('under /jina an unknown path is a 404 naming the route served, a wrong method a 405 with Allow, both in the family body', async (t) => {
  const { gateway, post } = await dialectGateway(t);
  const missing = await expectErrorResponse(t, gateway, await post('/jina/v2/rerank', { query: QUERY, documents: [PARIS] }), 404);
  t.is(missing.message, 'no route for POST /jina/v2/rerank; searchgate serves POST /jina/v1/rerank here');
  const wrongMethod = await fetch(`${gateway.url}${ROUTE}`, { method: 'PUT' });
  t.is(wrongMethod.headers.get('allow'), 'POST');
  await expectErrorResponse(t, gateway, wrongMethod, 405);
});
