/**
 * The Cohere dialect over HTTP (../shared/spec/dialects.md §4.1–4.2, §4.4, §6.1–6.3, §7.1–7.2):
 * /cohere/v1/rerank, /cohere/v2/rerank and the root /v2/rerank, with Cohere's clients' bodies, in
 * front of a vendor fake through searchgate's own provider for it.
 */
import test from 'ava';
import { COHERE_RERANK_MODELS } from '../../../src/vendors/cohere/wire.js';
import { JINA_RERANK_MODELS } from '../../../src/vendors/jina/wire.js';
import { VOYAGE_RERANK_MODELS } from '../../../src/vendors/voyage/wire.js';
import { expectErrorResponse } from '../../helpers/faults.js';
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
} from '../rerank-dialect-helpers.js';

const V1 = '/cohere/v1/rerank';
const V2_ROUTES = ['/cohere/v2/rerank', '/v2/rerank'];

test('v1: the spec example body (string and {text} documents, top_n, return_documents) answers the family body with API version 1', async (t) => {
  const { post } = await dialectGateway(t);
  const response = await post(V1, {
    model: 'rerank-english-v3.0',
    query: QUERY,
    top_n: 2,
    return_documents: true,
    documents: [BANANAS, { text: PARIS }, DOCUMENTS[2]],
  });
  await expectFamilyAnswer(t, response, { version: '1', ranked: [1, 2], documents: [PARIS, DOCUMENTS[2]!] });
});

test('v1: with rank_fields an object document is ranked as "field: value" lines in the listed order, skipping absent fields', async (t) => {
  const { post, upstream } = await dialectGateway(t);
  const documents = [
    { title: 'Bananas', body: 'They are yellow.', year: 2024 },
    { title: 'Paris', body: 'The capital of France.', source: 'atlas' },
  ];
  const response = await post(V1, { query: QUERY, documents, rank_fields: ['body', 'year', 'title'], return_documents: true });
  const texts = ['body: They are yellow.\nyear: 2024\ntitle: Bananas', 'body: The capital of France.\ntitle: Paris'];
  await expectFamilyAnswer(t, response, { version: '1', ranked: [1, 0], documents: [texts[1]!, texts[0]!] });
  t.deepEqual(upstream.requests[0]!.body.documents, texts, 'the upstream ranks those lines');
});

test('v1: an object document without text and without rank_fields is a 400 naming it', async (t) => {
  const { gateway, post } = await dialectGateway(t);
  const body = await expectErrorResponse(t, gateway, await post(V1, { query: QUERY, documents: [PARIS, { title: 'Paris' }] }), 400);
  t.regex(body.message, /^documents\[1\]\.text is required/);
});

test('v1: max_chunks_per_doc is accepted and changes nothing; the model may be left out', async (t) => {
  const { post, upstream } = await dialectGateway(t);
  const plain = await expectFamilyAnswer(t, await post(V1, { query: QUERY, documents: DOCUMENTS }), { version: '1' });
  const chunked = await expectFamilyAnswer(t, await post(V1, { query: QUERY, documents: DOCUMENTS, max_chunks_per_doc: 1 }), { version: '1' });
  t.deepEqual(chunked.results, plain.results);
  t.deepEqual(upstream.requests[1]!.body, upstream.requests[0]!.body, 'the upstream request is the same');
});

for (const path of V2_ROUTES) {
  test(`v2 ${path}: langchain-cohere's body with "max_tokens_per_doc": null, priority ignored, answers with API version 2`, async (t) => {
    const { post, upstream } = await dialectGateway(t);
    const response = await post(path, {
      model: 'rerank-v3.5',
      query: QUERY,
      documents: DOCUMENTS,
      top_n: null,
      max_tokens_per_doc: null,
      priority: 3,
      relevant_spans: null,
      return_documents: null,
    });
    await expectFamilyAnswer(t, response, { version: '2' });
    t.deepEqual(upstream.requests[0]!.body.documents, DOCUMENTS);
  });

  test(`v2 ${path}: litellm's body (return_documents true, top_n) carries each document as {text}`, async (t) => {
    const { post } = await dialectGateway(t);
    const response = await post(path, { model: 'rerank-v3.5', query: QUERY, documents: DOCUMENTS, top_n: 1, return_documents: true, max_tokens_per_doc: 512 });
    await expectFamilyAnswer(t, response, { version: '2', ranked: [1], documents: [PARIS] });
  });

  test(`v2 ${path}: a missing or null model is a 400 "invalid request: model is required", before the key is looked at`, async (t) => {
    const { gateway, post, upstream } = await dialectGateway(t);
    for (const body of [{ query: QUERY, documents: DOCUMENTS }, { model: null, query: QUERY, documents: DOCUMENTS }]) {
      const error = await expectErrorResponse(t, gateway, await post(path, body, null), 400);
      t.is(error.message, 'invalid request: model is required');
    }
    t.is(upstream.requests.length, 0);
  });
}

test('every vendor model name is accepted on the Cohere routes, in any case and with stray spaces; the answer names the model that scored', async (t) => {
  const { post } = await dialectGateway(t);
  const names = [...COHERE_RERANK_MODELS, ...JINA_RERANK_MODELS, ...VOYAGE_RERANK_MODELS];
  for (const name of [...names, '  RERANK-V3.5 ', 'Rerank-English-V3.0', 'service-reranker-v1']) {
    for (const path of [V1, ...V2_ROUTES]) {
      const response = await post(path, { model: name, query: QUERY, documents: [PARIS] });
      const body = (await response.json()) as { model: string };
      t.is(response.status, 200, `${path} ${name}`);
      t.is(body.model, 'service-reranker-v1', `${path} ${name}`);
    }
  }
});

test('an unknown model is a 400 listing the accepted names, and reaches no upstream', async (t) => {
  const { gateway, post, upstream } = await dialectGateway(t);
  for (const path of [V1, ...V2_ROUTES]) {
    const body = await expectErrorResponse(t, gateway, await post(path, { model: 'command-r', query: QUERY, documents: [PARIS] }), 400);
    t.is(body.message, 'unknown model "command-r"; available: service-reranker-v1, or a Cohere, Jina or Voyage rerank model name');
  }
  t.is(upstream.requests.length, 0);
});

test('meta.billed_units.search_units is the units charged: 2 for an account key at weights.rerank 2 (with the X-RateLimit headers), 0 for an operator key', async (t) => {
  const { gateway, post, account } = await dialectGateway(t, { accounts: { weights: { rerank: 2 } } });
  const { key } = await account();
  for (const [i, path] of [V1, ...V2_ROUTES].entries()) {
    const version = path === V1 ? '1' : '2';
    const response = await post(path, { model: 'rerank-v3.5', query: QUERY, documents: DOCUMENTS }, key);
    t.is(response.headers.get('x-ratelimit-limit'), '100');
    t.is(response.headers.get('x-ratelimit-remaining'), String(100 - 2 * (i + 1)));
    t.regex(response.headers.get('x-ratelimit-reset') ?? '', /^\d+$/);
    t.regex(response.headers.get('x-cache') ?? '', /^(MISS|BYPASS)$/);
    await expectFamilyAnswer(t, response, { version, units: 2 });
    const operator = await post(path, { model: 'rerank-v3.5', query: QUERY, documents: DOCUMENTS });
    t.is(operator.headers.get('x-ratelimit-limit'), null, 'operator keys have no allowance');
    await expectFamilyAnswer(t, operator, { version, units: 0 });
  }
  t.false(gateway.logLines.join('\n').includes(key.slice(16)), 'the key never reaches the log');
});

test('the Cohere routes count under the dialect label "cohere", with their route templates', async (t) => {
  const { gateway, post } = await dialectGateway(t);
  for (const path of [V1, ...V2_ROUTES]) t.is((await post(path, { model: 'rerank-v3.5', query: QUERY, documents: [PARIS] })).status, 200);
  t.is(await requestsCounted(gateway, 'cohere'), 3);
  t.is(await requestsCounted(gateway, 'cohere', '/v2/rerank'), 1);
});

for (const row of ERROR_ROWS) {
  test(`§7.1–7.2 ${row.condition}: ${row.status} in the family body {code, log_id, message, msg, detail} on each Cohere route`, async (t) => {
    const routes = [V1, ...V2_ROUTES].map((path) => ({ path, body: { model: 'rerank-v3.5', query: QUERY, documents: DOCUMENTS } }));
    await checkErrorRow(t, row, routes, async (gateway, response) => (await expectErrorResponse(t, gateway, response, row.status)).message);
  });
}

test('under /cohere an unknown path is a 404 naming the routes served, a wrong method a 405 with Allow, both in the family body', async (t) => {
  const { gateway, post } = await dialectGateway(t);
  const missing = await expectErrorResponse(t, gateway, await post('/cohere/v3/rerank', { query: QUERY, documents: [PARIS] }), 404);
  t.is(missing.message, 'no route for POST /cohere/v3/rerank; searchgate serves POST /cohere/v1/rerank, POST /cohere/v2/rerank, POST /v2/rerank here');
  const wrongMethod = await fetch(`${gateway.url}/cohere/v2/rerank`);
  t.is(wrongMethod.headers.get('allow'), 'POST');
  const body = await expectErrorResponse(t, gateway, wrongMethod, 405);
  t.regex(body.message, /^method GET is not allowed on \/cohere\/v2\/rerank/);
});

test('a body that is not JSON is a 400, and one of another type a 415, in the family body', async (t) => {
  const { gateway, post } = await dialectGateway(t);
  t.regex((await expectErrorResponse(t, gateway, await post('/cohere/v2/rerank', '{"query":'), 400)).message, /^request body is not a valid JSON object$/);
  const form = await fetch(`${gateway.url}/cohere/v1/rerank`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'query=x' });
  t.regex((await expectErrorResponse(t, gateway, form, 415)).message, /^Content-Type must be application\/json/);
});
