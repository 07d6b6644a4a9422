import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import { resultUrls, searchGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, searchCall, type ExpectedError } from '../../helpers/upstream-errors.js';
import { GOOGLE_CX, GOOGLE_DOCUMENTS, GOOGLE_KEY, startFakeGoogle, type GoogleDocument, type GoogleFailure } from './fake.js';
import { pathOf } from '../../helpers/vendor-fake.js';

const NOW = Date.parse('2024-03-01T12:00:00Z');
const WRONG_KEY = 'AIzaSy-wrong-key-0123456789';

type SetupOptions = { provider?: Record<string, unknown>; fake?: { retryAfterSeconds?: number; corpus?: GoogleDocument[] } };

async function setup(t: ExecutionContext, { provider = {}, fake = {} }: SetupOptions = {}) {
  const google = await startFakeGoogle({ now: () => NOW, ...fake });
  const gateway = await searchGateway(t, google, 'google', { type: 'google', baseUrl: google.url, apiKey: GOOGLE_KEY, cx: GOOGLE_CX, ...provider }, { now: () => NOW });
  return { google, gateway };
}

/** A search that Google fails with `failure` (null: as the setup makes it fail), held to the error contract. */
async function failing(t: ExecutionContext, failure: GoogleFailure | null, expected: ExpectedError, options: SetupOptions = {}) {
  const { google, gateway } = await setup(t, options);
  const call = { ...searchCall(gateway, 'google', 'lectures'), secrets: [GOOGLE_KEY, WRONG_KEY], requests: google.requests, fail: () => google.fail(failure) };
  return { google, ...(await expectUpstreamError(t, call, expected)) };
}

test('the documented request: key, cx, q, num, start; items mapped with titles, snippets and dates', async (t) => {
  const { google, gateway } = await setup(t);
  const body: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lectures', count: 3 }));

  const request = google.requests[0]!;
  t.is(request.method, 'GET');
  t.is(pathOf(request), '/customsearch/v1');
  const params = google.params(0);
  t.is(params.get('key'), GOOGLE_KEY);
  t.is(params.get('cx'), GOOGLE_CX);
  t.is(params.get('q'), 'lectures');
  t.is(params.get('num'), '3');
  t.is(params.get('start'), '1');
  for (const absent of ['dateRestrict', 'sort', 'siteSearch', 'siteSearchFilter', 'lr', 'hl', 'gl', 'safe']) t.false(params.has(absent), absent);

  t.deepEqual(resultUrls(body), GOOGLE_DOCUMENTS.slice(0, 3).map((document) => document.link));
  t.is(body.data.webPages.totalEstimatedMatches, GOOGLE_DOCUMENTS.length, 'searchInformation.totalResults, a string upstream');
  const [notes, talks, series] = body.data.webPages.value;
  t.is(notes.name, 'Lecture Notes | MIT OpenCourseWare');
  t.is(notes.snippet, 'Lecture notes for the course, with readings.', 'the date prefix is taken out of the snippet');
  t.is(notes.datePublished, '2024-01-05T00:00:00.000Z', 'from "Jan 5, 2024 ..."');
  t.is(talks.name, 'Lectures & talks');
  t.is(talks.snippet, 'Recorded talks and lectures from the autumn term.');
  t.is(talks.datePublished, '2023-11-20T08:30:00.000Z', 'pagemap.metatags article:published_time');
  t.is(series.datePublished, '2024-02-28T12:00:00.000Z', '"2 days ago ..." against the request clock');
});

test('language as lr and hl in Google codes, with country and SafeSearch from the config', async (t) => {
  const { google, gateway } = await setup(t, { provider: { language: 'de', country: 'DE', safe: 'active' } });
  const german: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'vorlesung', count: 5 }));
  const params = google.params(0);
  t.deepEqual([params.get('lr'), params.get('hl'), params.get('gl'), params.get('safe')], ['lang_de', 'de', 'de', 'active']);
  t.true(resultUrls(german).length > 0);
  t.true(resultUrls(german).every((url) => GOOGLE_DOCUMENTS.find((document) => document.link === url)!.language === 'de'));

  for (const [language, lr, hl] of [['zh-TW', 'lang_zh-TW', 'zh-TW'], ['he', 'lang_iw', 'iw'], ['pt-BR', 'lang_pt', 'pt-BR']] as const) {
    const body: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lectures', language }));
    const sent = google.params(google.requests.length - 1);
    t.deepEqual([sent.get('lr'), sent.get('hl')], [lr, hl]);
    t.deepEqual(body.data.webPages.value, [], 'no items in the reply is an empty answer, not garbage');
  }

  // Ukrainian has an interface language but no lr value: hl only.
  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lectures', language: 'uk' }));
  const ukrainian = google.params(google.requests.length - 1);
  t.deepEqual([ukrainian.get('hl'), ukrainian.has('lr')], ['uk', false]);
});

test('freshness: presets as dateRestrict d1/w1/m1/y1, a date range as sort=date:r:YYYYMMDD:YYYYMMDD', async (t) => {
  const { google, gateway } = await setup(t);
  const week: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lectures', freshness: 'oneWeek' }));
  t.is(google.params(0).get('dateRestrict'), 'w1');
  t.false(google.params(0).has('sort'));
  t.deepEqual(resultUrls(week), ['https://news.example.net/lecture-series']);

  for (const [preset, code] of [['oneDay', 'd1'], ['oneMonth', 'm1'], ['oneYear', 'y1']] as const) {
    await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lectures', freshness: preset }));
    t.is(google.params(google.requests.length - 1).get('dateRestrict'), code);
  }

  const range: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lectures', freshness: '2024-01-10..2024-01-12' }));
  const sent = google.params(google.requests.length - 1);
  t.is(sent.get('sort'), 'date:r:20240110:20240112');
  t.false(sent.has('dateRestrict'));
  t.deepEqual(resultUrls(range), ['https://site0.example/lecture-9', 'https://site1.example/lecture-10', 'https://site2.example/lecture-11']);
});

test('domain filters: one site as siteSearch with i or e, several as site: operators in q', async (t) => {
  const { google, gateway } = await setup(t);
  const one: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lectures', count: 5, includeDomains: ['site1.example'] }));
  t.deepEqual([google.params(0).get('q'), google.params(0).get('siteSearch'), google.params(0).get('siteSearchFilter')], ['lectures', 'site1.example', 'i']);
  t.true(resultUrls(one).length === 5 && resultUrls(one).every((url) => url.startsWith('https://site1.example/')));

  const notOne: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lectures', count: 5, excludeDomains: ['ocw.mit.edu'] }));
  t.deepEqual([google.params(1).get('q'), google.params(1).get('siteSearch'), google.params(1).get('siteSearchFilter')], ['lectures', 'ocw.mit.edu', 'e']);
  t.false(resultUrls(notOne).some((url) => url.includes('ocw.mit.edu')));

  const several: any = await expectSearchOk(
    t,
    await gateway.post('/v1/web-search', { query: 'lectures', count: 5, includeDomains: ['site1.example', 'site2.example'], excludeDomains: ['example.org'] }),
  );
  t.is(google.params(2).get('q'), 'lectures (site:site1.example OR site:site2.example) -site:example.org');
  t.false(google.params(2).has('siteSearch'));
  t.true(resultUrls(several).length === 5 && resultUrls(several).every((url) => /^https:\/\/site[12]\.example\//.test(url)));
});

test('count honoured through start = results so far + 1, ten at a time; no nextPage ends the paging', async (t) => {
  const { google, gateway } = await setup(t);
  const body: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lectures', count: 25 }));
  t.deepEqual(resultUrls(body), GOOGLE_DOCUMENTS.slice(0, 25).map((document) => document.link));
  t.deepEqual(google.requests.map((_, n) => [google.params(n).get('start'), google.params(n).get('num')]), [['1', '10'], ['11', '10'], ['21', '10']]);

  const exact = await setup(t, { fake: { corpus: GOOGLE_DOCUMENTS.slice(0, 40) } });
  const all: any = await expectSearchOk(t, await exact.gateway.post('/v1/web-search', { query: 'lectures', count: 50 }));
  t.is(resultUrls(all).length, 40);
  t.deepEqual(exact.google.requests.map((_, n) => exact.google.params(n).get('start')), ['1', '11', '21', '31'], 'the fourth page was full but had no nextPage');
});

test('text mode sends the same request: the API has no page text, the content chain supplies it', async (t) => {
  const { google, gateway } = await setup(t);
  const body: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lectures', count: 2, contents: { text: true } }));
  t.deepEqual([...google.params(0).keys()].sort(), ['cx', 'key', 'num', 'q', 'start']);
  t.is(resultUrls(body).length, 2);
  for (const result of body.data.webPages.value) t.false('snippet' in result);
});

test('a wrong key (400 INVALID_ARGUMENT, API_KEY_INVALID) is an auth failure: 502, the key in the URL never shown', async (t) => {
  const { google } = await failing(t, null, { status: 502, kind: 'auth', mentions: /google: HTTP 400: .*API key not valid/ }, { provider: { apiKey: WRONG_KEY } });
  t.is(google.params(0).get('key'), WRONG_KEY);
});

test('a project without access (403 PERMISSION_DENIED) is an auth failure: 502', async (t) => {
  await failing(t, 'no_access', { status: 502, kind: 'auth', mentions: /does not have the access to Custom Search JSON API/ });
});

test("429 for 'Queries per day' is a used-up daily quota: 503", async (t) => {
  await failing(t, 'daily_quota', { status: 503, kind: 'quota', mentions: /Queries per day/ });
});

test('429 for a per-minute limit with Retry-After is a rate limit: 503 with Retry-After', async (t) => {
  await failing(t, 'rate_limited', { status: 503, kind: 'rate_limited', retryAfter: '30' }, { fake: { retryAfterSeconds: 30 } });
});

test('500 is 502; a truncated reply and a JSON reply that is no search are 502; a stall is 504', async (t) => {
  await failing(t, 'server_error', { status: 502, kind: 'unavailable' });
  await failing(t, 'malformed', { status: 502, kind: 'garbage' });
  await failing(t, 'not_a_search', { status: 502, kind: 'garbage', mentions: /neither items nor search metadata/ });
  await failing(t, 'stall', { status: 504, kind: 'timeout' }, { provider: { timeoutMs: 150 } });
});
