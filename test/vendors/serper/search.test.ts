import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import { resultUrls, searchGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, searchCall, type ExpectedError } from '../../helpers/upstream-errors.js';
import { SERPER_DOCUMENTS, SERPER_KEY, startFakeSerper, type SerperFailure } from './fake.js';
import { pathOf } from '../../helpers/vendor-fake.js';

const NOW = Date.parse('2024-03-01T12:00:00Z');
const WRONG_KEY = 'serper-wrong-key-0123456789';

type SetupOptions = { provider?: Record<string, unknown>; fake?: { retryAfterSeconds?: number } };

async function setup(t: ExecutionContext, { provider = {}, fake = {} }: SetupOptions = {}) {
  const serper = await startFakeSerper({ now: () => NOW, ...fake });
  const gateway = await searchGateway(t, serper, 'serper', { type: 'serper', baseUrl: serper.url, apiKey: SERPER_KEY, ...provider }, { now: () => NOW });
  return { serper, gateway };
}

/** A search that Serper fails with `failure` (null: as the setup makes it fail), held to the error contract. */
async function failing(t: ExecutionContext, failure: SerperFailure | null, expected: ExpectedError, options: SetupOptions = {}) {
  const { serper, gateway } = await setup(t, options);
  const call = { ...searchCall(gateway, 'serper', 'search'), secrets: [SERPER_KEY, WRONG_KEY], requests: serper.requests, fail: () => serper.fail(failure) };
  return { serper, ...(await expectUpstreamError(t, call, expected)) };
}

test('the request: POST /search with X-API-KEY and {q, num, page}; organic results mapped, ages and dates read', async (t) => {
  const { serper, gateway } = await setup(t);
  const body: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'google search', count: 3 }));

  const request = serper.requests[0]!;
  t.is(request.method, 'POST');
  t.is(pathOf(request), '/search');
  t.is(request.headers['x-api-key'], SERPER_KEY);
  t.regex(request.headers['content-type'] ?? '', /application\/json/);
  t.deepEqual(request.body, { q: 'google search', num: 3, page: 1 });

  t.deepEqual(resultUrls(body), SERPER_DOCUMENTS.slice(0, 3).map((document) => document.link), 'organic only, not the knowledge graph');
  const [google, howSearchWorks, note] = body.data.webPages.value;
  t.is(google.name, 'Google');
  t.is(google.snippet, "Search the world's information...");
  t.false('datePublished' in google);
  t.is(howSearchWorks.datePublished, '2024-02-27T12:00:00.000Z', '"3 days ago" against the request clock');
  t.is(note.datePublished, '2024-01-01T00:00:00.000Z', '"Jan 1, 2024"');
  t.is(note.snippet, 'Note number 0 about search & engines.');
});

test('country and language: gl and hl, the request language over the configured one', async (t) => {
  const { serper, gateway } = await setup(t, { provider: { country: 'US', language: 'pt-BR' } });
  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'busca', count: 2 }));
  t.deepEqual(serper.requests[0]!.body, { q: 'busca', num: 2, page: 1, gl: 'us', hl: 'pt-br' });
  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'busca', count: 2, language: 'zh-TW' }));
  t.is(serper.requests[1]!.body.hl, 'zh-tw');
});

test('freshness: presets as tbs qdr:, a date range as Google cdr with US-style dates', async (t) => {
  const { serper, gateway } = await setup(t);
  const week: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'search', freshness: 'oneWeek' }));
  t.is(serper.requests[0]!.body.tbs, 'qdr:w');
  t.deepEqual(resultUrls(week), ['https://www.google.com/search/howsearchworks/']);

  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'search', freshness: 'oneYear' }));
  t.is(serper.requests[1]!.body.tbs, 'qdr:y');

  const range: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'search', freshness: '2024-01-10..2024-01-12' }));
  t.is(serper.requests[2]!.body.tbs, 'cdr:1,cd_min:1/10/2024,cd_max:1/12/2024');
  t.deepEqual(resultUrls(range), ['https://site0.example/note-9', 'https://site1.example/note-10', 'https://site2.example/note-11']);
  t.deepEqual(range.data.webPages.value.map((result: any) => result.datePublished), [
    '2024-01-10T00:00:00.000Z',
    '2024-01-11T00:00:00.000Z',
    '2024-01-12T00:00:00.000Z',
  ]);
});

test('domain filters as site: and -site: operators in q', async (t) => {
  const { serper, gateway } = await setup(t);
  const included: any = await expectSearchOk(
    t,
    await gateway.post('/v1/web-search', { query: 'search', count: 8, includeDomains: ['site1.example', 'site2.example'] }),
  );
  t.is(serper.requests[0]!.body.q, 'search (site:site1.example OR site:site2.example)');
  t.is(resultUrls(included).length, 8);
  t.true(resultUrls(included).every((url) => /^https:\/\/site[12]\.example\//.test(url)));

  const excluded: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'search', count: 8, excludeDomains: ['site0.example', 'google.com'] }));
  t.is(serper.requests[1]!.body.q, 'search -site:site0.example -site:google.com');
  t.is(resultUrls(excluded).length, 8);
  t.true(resultUrls(excluded).every((url) => /^https:\/\/site[12]\.example\//.test(url)));
});

test('count honoured by paging 1-based pages of a constant num (10 by default, configurable)', async (t) => {
  const { serper, gateway } = await setup(t);
  const body: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'search', count: 25 }));
  t.deepEqual(resultUrls(body), SERPER_DOCUMENTS.slice(0, 25).map((document) => document.link));
  t.deepEqual(serper.requests.map((request) => [request.body.page, request.body.num]), [[1, 10], [2, 10], [3, 10]]);

  const wide = await setup(t, { provider: { maxPageSize: 20 } });
  const widePage: any = await expectSearchOk(t, await wide.gateway.post('/v1/web-search', { query: 'search', count: 25 }));
  t.deepEqual(resultUrls(widePage), SERPER_DOCUMENTS.slice(0, 25).map((document) => document.link));
  t.deepEqual(wide.serper.requests.map((request) => [request.body.page, request.body.num]), [[1, 20], [2, 20]]);

  // A short page is the end: 40 results, pages of 20, the third request is never made.
  const all: any = await expectSearchOk(t, await wide.gateway.post('/v1/web-search', { query: 'search', count: 50 }));
  t.is(resultUrls(all).length, SERPER_DOCUMENTS.length);
  t.is(wide.serper.requests.length, 2 + 3);
});

test('text mode sends the same request: Serper has no page text, the content chain supplies it', async (t) => {
  const { serper, gateway } = await setup(t);
  const body: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'search', count: 2, contents: { text: true } }));
  t.deepEqual(serper.requests[0]!.body, { q: 'search', num: 2, page: 1 });
  t.is(resultUrls(body).length, 2);
  for (const result of body.data.webPages.value) t.false('snippet' in result);
});

test('a refused key (403 "Unauthorized.") is a provider failure: 502 naming serper, never the key', async (t) => {
  const { serper } = await failing(t, null, { status: 502, kind: 'auth', mentions: /serper: HTTP 403: Unauthorized/ }, { provider: { apiKey: WRONG_KEY } });
  t.is(serper.requests[0]!.headers['x-api-key'], WRONG_KEY);
});

test('429 with Retry-After: 503 with Retry-After', async (t) => {
  await failing(t, 'rate_limited', { status: 503, kind: 'rate_limited', retryAfter: '5' }, { fake: { retryAfterSeconds: 5 } });
});

test('400 "Not enough credits" is a used-up balance, not a bad request: 503', async (t) => {
  await failing(t, 'credits', { status: 503, kind: 'quota', mentions: [/Not enough credits/, /out of quota/] });
});

test('upstream 5xx is 502, an HTML page instead of JSON 502, a stalled upstream 504', async (t) => {
  await failing(t, 'server_error', { status: 502, kind: 'unavailable' });
  await failing(t, 'malformed', { status: 502, kind: 'garbage', mentions: /not JSON/ });
  await failing(t, 'stall', { status: 504, kind: 'timeout' }, { provider: { timeoutMs: 150 } });
});
