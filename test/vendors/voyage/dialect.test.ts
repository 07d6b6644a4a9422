/**
 * The Voyage dialect over HTTP (../shared/spec/dialects.md §4.3, §4.4, §6.4, §6.8, §7.3):
 * POST /voyage/v1/rerank with the bodies of voyageai and litellm, in front of Voyage's fake through
 * searchgate's own Voyage provider (which reports token counts), Cohere's (which does not), and the
 * embedded model.
 */
import test, { type ExecutionContext } from 'ava';
import { VOYAGE_AUTH_MESSAGES, VOYAGE_RERANK_MODELS } from '../../../src/vendors/voyage/wire.js';
import { REAL_LOCAL_RERANKER, startGateway, type RunningGateway } from '../../helpers/gateway.js';
import {
  BANANAS,
  DOCUMENTS,
  ERROR_ROWS,
  PARIS,
  QUERY,
  RANKED,
  checkErrorRow,
  dialectGateway,
  requestsCounted,
  type ErrorRow,
} from '../rerank-dialect-helpers.js';

const ROUTE = '/voyage/v1/rerank';
/** What voyageai 0.5.0 sends for vo.rerank(query, documents, model="rerank-2.5"). */
const VOYAGEAI_BODY = { query: QUERY, documents: DOCUMENTS, model: 'rerank-2.5', top_k: null, truncation: true };

/** Tokens Voyage's fake counts for a list of documents: their words. */
const fakeTokens = (documents: readonly string[]) => documents.reduce((sum, document) => sum + document.split(/\s+/).length, 0);

/** A Voyage error: exactly {"detail": <string>}, JSON, with the log id in a header and in a log line. Returns the detail. */
async function expectVoyageError(t: ExecutionContext, gateway: RunningGateway, response: Response, status: number): Promise<string> {
  const text = await response.text();
  t.is(response.status, status, text);
  t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(text) as { detail: unknown };
  t.deepEqual(Object.keys(body), ['detail']);
  t.is(typeof body.detail, 'string');
  const logId = response.headers.get('x-log-id') ?? '';
  t.regex(logId, /^[0-9a-f]{32}$/);
  t.true(gateway.logLines.some((line) => line.includes(logId)), 'a log line carries the log id');
  return body.detail as string;
}

test("voyageai's body answers {object, data, model, usage}: best first, the model that scored, the upstream's token count", async (t) => {
  const { gateway, post, upstream } = await dialectGateway(t);
  const response = await post(ROUTE, VOYAGEAI_BODY);
  const body = (await response.json()) as any;
  t.is(response.status, 200, JSON.stringify(body));
  t.deepEqual(Object.keys(body), ['object', 'data', 'model', 'usage']);
  t.is(body.object, 'list');
  t.is(body.model, 'service-reranker-v1');
  t.deepEqual(body.usage, { total_tokens: fakeTokens(DOCUMENTS) });
  t.deepEqual(body.data.map((result: { index: number }) => result.index), RANKED);
  for (const result of body.data) {
    t.deepEqual(Object.keys(result), ['index', 'relevance_score'], 'no document unless asked');
    t.true(result.relevance_score >= 0 && result.relevance_score <= 1);
  }
  t.true(body.data[0].relevance_score > body.data[1].relevance_score);
  t.regex(response.headers.get('x-log-id') ?? '', /^[0-9a-f]{32}$/);
  t.regex(response.headers.get('x-cache') ?? '', /^(MISS|BYPASS)$/);
  // truncation has no effect: the upstream is asked as searchgate's provider always asks it.
  t.like(upstream.requests[0]!.body, { documents: DOCUMENTS, truncation: true });
  t.is(await requestsCounted(gateway, 'voyage', ROUTE), 1, 'counted under the dialect label "voyage"');
});

test("litellm's body (return_documents true) with top_k: the best top_k, each with its document as a string", async (t) => {
  const { post } = await dialectGateway(t);
  const response = await post(ROUTE, { model: 'rerank-2.5-lite', query: QUERY, documents: DOCUMENTS, top_k: 2, return_documents: true, truncation: false });
  const body = (await response.json()) as any;
  t.is(response.status, 200, JSON.stringify(body));
  t.deepEqual(
    body.data.map((result: { index: number; document: string }) => [result.index, result.document]),
    [
      [1, PARIS],
      [2, DOCUMENTS[2]],
    ],
  );
});

test('usage.total_tokens is 0 ("not measured") when the provider that answered reports no count', async (t) => {
  const { post, upstream } = await dialectGateway(t, { upstream: 'cohere' });
  const body = (await (await post(ROUTE, VOYAGEAI_BODY)).json()) as any;
  t.is(upstream.requests.length, 1);
  t.deepEqual(body.usage, { total_tokens: 0 });
  t.deepEqual(body.data.map((result: { index: number }) => result.index), RANKED);
});

test('one cache for every route: the same ranking asked through Cohere, then Voyage, is a HIT that reaches no upstream and keeps the count', async (t) => {
  const { post, upstream } = await dialectGateway(t, { config: { cache: { enabled: true } } });
  t.is((await post('/cohere/v2/rerank', { model: 'rerank-v3.5', query: QUERY, documents: DOCUMENTS })).headers.get('x-cache'), 'MISS');
  const response = await post(ROUTE, VOYAGEAI_BODY);
  t.is(response.headers.get('x-cache'), 'HIT');
  t.deepEqual(((await response.json()) as any).usage, { total_tokens: fakeTokens(DOCUMENTS) });
  t.is(upstream.requests.length, 1);
});

test('Voyage, Cohere and Jina model names are aliases in any case and with stray spaces; an unknown one is a 400 listing what is accepted', async (t) => {
  const { gateway, post } = await dialectGateway(t);
  for (const name of [...VOYAGE_RERANK_MODELS, ' Rerank-2.5 ', 'rerank-v3.5', 'jina-reranker-v3']) {
    const response = await post(ROUTE, { ...VOYAGEAI_BODY, model: name });
    t.is(response.status, 200, name);
    t.is(((await response.json()) as { model: string }).model, 'service-reranker-v1', name);
  }
  const unknown = await expectVoyageError(t, gateway, await post(ROUTE, { ...VOYAGEAI_BODY, model: 'voyage-3' }), 400);
  t.is(unknown, 'unknown model "voyage-3"; available: service-reranker-v1, or a Cohere, Jina or Voyage rerank model name');
});

test('requests Voyage refuses are 400s {detail} naming the field, before the key is looked at, reaching no upstream', async (t) => {
  const { gateway, post, upstream } = await dialectGateway(t, { config: { rerank: { maxDocuments: 1500, models: { 'service-reranker-v1': { chain: ['up'] } } } } });
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ query: QUERY, documents: DOCUMENTS }, 'model is required'],
    [{ ...VOYAGEAI_BODY, model: null }, 'model is required'],
    [{ ...VOYAGEAI_BODY, query: undefined }, 'query is required'],
    [{ ...VOYAGEAI_BODY, query: '  ' }, 'query must not be empty or blank'],
    [{ ...VOYAGEAI_BODY, documents: [{ text: PARIS }] }, 'documents[0] must be string'],
    [{ ...VOYAGEAI_BODY, documents: Array.from({ length: 1001 }, (_, i) => `document ${i}`) }, 'documents must NOT have more than 1000 items'],
    [{ ...VOYAGEAI_BODY, top_k: 0 }, 'top_k must be >= 1'],
    [{ ...VOYAGEAI_BODY, top_k: 1.5 }, 'top_k must be integer'],
    [{ ...VOYAGEAI_BODY, truncation: 'yes' }, 'truncation must be boolean'],
  ];
  for (const [body, message] of cases) t.is(await expectVoyageError(t, gateway, await post(ROUTE, body, null), 400), message, JSON.stringify(body).slice(0, 80));
  t.is(upstream.requests.length, 0);
});

test('rerank.maxDocuments below Voyage\'s 1,000 is the cap too', async (t) => {
  const { gateway, post } = await dialectGateway(t, { config: { rerank: { maxDocuments: 2, models: { 'service-reranker-v1': { chain: ['up'] } } } } });
  t.is(await expectVoyageError(t, gateway, await post(ROUTE, VOYAGEAI_BODY), 400), 'documents must NOT have more than 2 items');
});

test('an account key is charged weights.rerank and its answer carries the X-RateLimit headers; the key is never logged', async (t) => {
  const { gateway, post, account } = await dialectGateway(t, { accounts: { weights: { rerank: 2 } } });
  const { key } = await account();
  const response = await post(ROUTE, VOYAGEAI_BODY, key);
  t.is(response.status, 200);
  t.is(response.headers.get('x-ratelimit-limit'), '100');
  t.is(response.headers.get('x-ratelimit-remaining'), '98');
  t.regex(response.headers.get('x-ratelimit-reset') ?? '', /^\d+$/);
  t.false(gateway.logLines.join('\n').includes(key.slice(16)));
});

/** Voyage's sentence before searchgate's reason, by §7.3 row. */
const SENTENCES: Partial<Record<ErrorRow['condition'], string>> = {
  'missing key': VOYAGE_AUTH_MESSAGES.missingKey,
  'bad key': VOYAGE_AUTH_MESSAGES.invalidKey,
  'deleted key': VOYAGE_AUTH_MESSAGES.invalidKey,
};

for (const row of ERROR_ROWS) {
  const sentence = SENTENCES[row.condition];
  test(`§7.3 ${row.condition}: ${row.status} {"detail": ${sentence ? `"${sentence} (searchgate: …)"` : "/v1's message"}}`, async (t) => {
    await checkErrorRow(t, row, [{ path: ROUTE, body: VOYAGEAI_BODY }], async (gateway, response) => {
      const detail = await expectVoyageError(t, gateway, response, row.status);
      if (!sentence) return detail;
      const wrapped = /^(.*?) \(searchgate: (.*)\)$/.exec(detail);
      t.is(wrapped?.[1], sentence);
      return wrapped?.[2] ?? detail;
    });
  });
}

test("the status line's reason phrase carries the message, for clients that show only it", async (t) => {
  const { post } = await dialectGateway(t);
  const response = await post(ROUTE, VOYAGEAI_BODY, 'sk-not-a-key-000');
  t.is(response.statusText, 'Unauthorized - invalid API key');
});

test('under /voyage an unknown path is a 404 naming the route served; a wrong method a 405 with Allow; bad bodies 400 and 415; all {detail}', async (t) => {
  const { gateway, post } = await dialectGateway(t);
  t.is(
    await expectVoyageError(t, gateway, await post('/voyage/v1/embeddings', { input: ['x'], model: 'voyage-3' }), 404),
    'no route for POST /voyage/v1/embeddings; searchgate serves POST /voyage/v1/rerank here',
  );
  const wrongMethod = await fetch(`${gateway.url}${ROUTE}`);
  t.is(wrongMethod.headers.get('allow'), 'POST');
  t.regex(await expectVoyageError(t, gateway, wrongMethod, 405), /^method GET is not allowed on \/voyage\/v1\/rerank/);
  t.is(await expectVoyageError(t, gateway, await post(ROUTE, '{"query": '), 400), 'request body is not a valid JSON object');
  const text = await fetch(`${gateway.url}${ROUTE}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
  t.regex(await expectVoyageError(t, gateway, text, 415), /^Content-Type must be application\/json/);
});

test('over the embedded model, Paris ranks first through /cohere/v2/rerank and /voyage/v1/rerank (which reports 0 tokens: not measured)', async (t) => {
  const gateway = await startGateway({ providers: { 'local-reranker': REAL_LOCAL_RERANKER }, cache: { enabled: false } });
  t.teardown(() => gateway.close());
  const documents = [BANANAS, 'Berlin is the capital of Germany.', PARIS];
  const query = 'what is the capital of france';
  const cohere = (await (await gateway.post('/cohere/v2/rerank', { model: 'rerank-v3.5', query, documents })).json()) as any;
  t.is(cohere.results[0].index, 2, JSON.stringify(cohere));
  const voyage = (await (await gateway.post(ROUTE, { model: 'rerank-2.5', query, documents, top_k: null })).json()) as any;
  t.is(voyage.data[0].index, 2, JSON.stringify(voyage));
  t.deepEqual(voyage.usage, { total_tokens: 0 });
  t.deepEqual(
    voyage.data.map((result: { relevance_score: number }) => result.relevance_score),
    cohere.results.map((result: { relevance_score: number }) => result.relevance_score),
    'the same scores on both routes',
  );
});
