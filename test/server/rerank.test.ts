import test from 'ava';
import { createAjv, responseValidators } from '../../src/api/validate.js';
import { sendJson, startGateway, startUpstream, upstreamConfig, type RecordedRequest } from '../helpers/gateway.js';

const validators = responseValidators(createAjv());

/** An upstream reranker that scores by how many query words each document contains, as LangSearch answers. */
async function scoringUpstream() {
  return startUpstream((request: RecordedRequest, res) => {
    const { query, documents } = request.body as { query: string; documents: string[] };
    const words = query.toLowerCase().split(/\s+/);
    const results = documents.map((document, index) => ({
      index,
      relevance_score: words.filter((word) => document.toLowerCase().includes(word)).length / words.length,
    }));
    results.sort((a, b) => b.relevance_score - a.relevance_score);
    sendJson(res, 200, { code: 200, log_id: 'up', msg: null, model: 'langsearch-reranker-v1', results });
  });
}

async function setup(t: any, extra: Record<string, unknown> = {}, providerExtra: Record<string, unknown> = {}) {
  const upstream = await scoringUpstream();
  const gateway = await startGateway({ ...upstreamConfig(upstream.url, providerExtra), cache: { enabled: false }, ...extra });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  return { gateway, upstream };
}

const DOCUMENTS = ['bananas are yellow', 'paris is the capital of france', 'the capital of italy is rome', 'wine of france'];

test('scores every document, best first, ties by index; both score fields carry the same value', async (t) => {
  const { gateway, upstream } = await setup(t);
  const response = await gateway.post('/v1/rerank', {
    model: 'service-reranker-v1',
    query: 'capital of france',
    documents: DOCUMENTS,
  });
  t.is(response.status, 200);
  const body = (await response.json()) as any;
  t.true(validators.rerank(body), JSON.stringify(validators.rerank.errors));
  t.is(body.code, 200);
  t.is(body.msg, null);
  t.regex(body.log_id, /^[0-9a-f]{32}$/);
  t.is(body.model, 'service-reranker-v1');
  t.deepEqual(body.results.map((r: any) => r.index), [1, 2, 3, 0]);
  for (const result of body.results) {
    t.is(result.relevance_score, result.rerankScore);
    t.true(result.relevance_score >= 0 && result.relevance_score <= 1);
    t.false('document' in result, 'return_documents defaults to false');
  }
  // Ties: documents 2 and 3 both contain two of the three words; index order decides.
  t.is(body.results[1].relevance_score, body.results[2].relevance_score);
  t.deepEqual(upstream.requests[0]!.body.documents, DOCUMENTS);
  t.is(upstream.requests[0]!.headers.authorization, 'Bearer upstream-secret-key');
});

test('top_n cuts the ranking, return_documents adds the texts, model defaults to service-reranker-v1', async (t) => {
  const { gateway } = await setup(t);
  const body = (await (
    await gateway.post('/v1/rerank', { query: 'capital of france', documents: DOCUMENTS, top_n: 2, return_documents: true })
  ).json()) as any;
  t.is(body.model, 'service-reranker-v1');
  t.deepEqual(body.results.map((r: any) => r.index), [1, 2]);
  t.deepEqual(body.results.map((r: any) => r.document.text), [DOCUMENTS[1], DOCUMENTS[2]]);
  const all = (await (await gateway.post('/v1/rerank', { query: 'capital', documents: DOCUMENTS, top_n: 99 })).json()) as any;
  t.is(all.results.length, DOCUMENTS.length, 'top_n above the document count returns all');
  const objects = (await (
    await gateway.post('/v1/rerank', { query: 'capital', documents: DOCUMENTS.map((text) => ({ text })), return_documents: true })
  ).json()) as any;
  t.is(objects.results.length, 4, 'Cohere-style {text} documents are accepted');
});

test('identical documents are scored once and keep their own indices', async (t) => {
  const { gateway, upstream } = await setup(t);
  const body = (await (
    await gateway.post('/v1/rerank', { query: 'capital of france', documents: ['x', DOCUMENTS[1], 'x', DOCUMENTS[1]] })
  ).json()) as any;
  t.deepEqual(upstream.requests[0]!.body.documents, ['x', DOCUMENTS[1]]);
  t.deepEqual(body.results.map((r: any) => r.index), [1, 3, 0, 2]);
});

test('documents beyond an upstream limit go in batches whose scores merge exactly', async (t) => {
  const { gateway, upstream } = await setup(t, {}, { maxDocuments: 2 });
  const body = (await (await gateway.post('/v1/rerank', { query: 'capital of france', documents: DOCUMENTS })).json()) as any;
  t.is(upstream.requests.length, 2);
  t.deepEqual(upstream.requests.map((r) => r.body.documents.length), [2, 2]);
  t.deepEqual(body.results.map((r: any) => r.index), [1, 2, 3, 0]);
});

test('rerank validation: required fields, bounds, unknown model', async (t) => {
  const { gateway, upstream } = await setup(t, { rerank: { maxDocuments: 5, models: { 'service-reranker-v1': { chain: ['up'] } } } });
  const cases: Array<[unknown, RegExp]> = [
    [{ documents: ['a'] }, /query is required/],
    [{ query: ' ', documents: ['a'] }, /query must not be empty or blank/],
    [{ query: 'q' }, /documents is required/],
    [{ query: 'q', documents: [] }, /documents must NOT have fewer than 1 items/],
    [{ query: 'q', documents: ['a', 'b', 'c', 'd', 'e', 'f'] }, /documents must NOT have more than 5 items/],
    [{ query: 'q', documents: 'a' }, /documents must be array/],
    [{ query: 'q', documents: [1] }, /documents\[0\] must be string or object/],
    [{ query: 'q', documents: [{ title: 'x' }] }, /documents\[0\].text is required/],
    [{ query: 'q', documents: ['a'], top_n: 0 }, /top_n must be >= 1/],
    [{ query: 'q', documents: ['a'], top_n: 1.5 }, /top_n must be integer/],
    [{ query: 'q', documents: ['a'], return_documents: 'yes' }, /return_documents must be boolean/],
    [{ query: 'q', documents: ['a'], model: 'gpt-reranker' }, /unknown model "gpt-reranker"; available: service-reranker-v1/],
  ];
  for (const [body, message] of cases) {
    const response = await gateway.post('/v1/rerank', body);
    const json = (await response.json()) as any;
    t.is(response.status, 400, JSON.stringify(body));
    t.regex(json.message, message);
    t.true(validators.error(json));
  }
  t.is(upstream.requests.length, 0);
});

test('without the embedded model and no other reranker, rerank answers 503 saying how to fetch it', async (t) => {
  const gateway = await startGateway({});
  t.teardown(() => gateway.close());
  const response = await gateway.post('/v1/rerank', { query: 'q', documents: ['a'] });
  t.is(response.status, 503);
  const body = (await response.json()) as any;
  t.is(body.code, '503');
  t.regex(body.message, /embedded reranker is not available: .*no-such-model does not exist; run `npm run fetch-model`/);
  t.true(gateway.logLines.some((line) => line.includes('the embedded reranker is not available')));
});

test('upstream scores outside [0,1] are clamped, missing scores are a 502', async (t) => {
  const upstream = await startUpstream((request, res) => {
    const documents = (request.body as { documents: string[] }).documents;
    const results = documents.length === 2 ? [{ index: 0, relevance_score: 1.7 }, { index: 1, relevance_score: -0.2 }] : [{ index: 0, relevance_score: 0.5 }];
    sendJson(res, 200, { code: 200, results });
  });
  const gateway = await startGateway({ ...upstreamConfig(upstream.url), cache: { enabled: false } });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  const body = (await (await gateway.post('/v1/rerank', { query: 'q', documents: ['a', 'b'] })).json()) as any;
  t.deepEqual(body.results.map((r: any) => r.relevance_score), [1, 0]);
  const partial = await gateway.post('/v1/rerank', { query: 'q', documents: ['a', 'b', 'c'] });
  t.is(partial.status, 502);
  t.regex(((await partial.json()) as any).message, /does not score every document/);
});

test('service-reranker-v1 is the alias of the default model, which config chooses', async (t) => {
  const upstream = await scoringUpstream();
  const gateway = await startGateway({
    providers: { up: { type: 'searchgate-compatible', baseUrl: upstream.url } },
    rerank: { defaultModel: 'bge-large', models: { 'bge-large': { chain: ['up'] }, 'mini': { chain: ['up'] } } },
    cache: { enabled: false },
  });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  for (const model of [undefined, 'service-reranker-v1', 'bge-large', 'mini']) {
    const response = await gateway.post('/v1/rerank', { ...(model ? { model } : {}), query: 'capital', documents: ['a capital'] });
    t.is(response.status, 200, String(model));
    t.is(((await response.json()) as any).model, model ?? 'service-reranker-v1', 'the response names the model asked for');
  }
  t.deepEqual(upstream.requests.map((r) => r.body.model), ['bge-large', 'bge-large', 'bge-large', 'mini'], 'upstream gets the resolved id');
  const unknown = (await (await gateway.post('/v1/rerank', { model: 'other', query: 'q', documents: ['a'] })).json()) as any;
  t.is(unknown.message, 'unknown model "other"; available: service-reranker-v1, bge-large, mini, or a Cohere, Jina or Voyage rerank model name');
});
