import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import { resultUrls, searchGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, searchCall, type ExpectedError } from '../../helpers/upstream-errors.js';
import { BRAVE_DOCUMENTS, BRAVE_KEY, startFakeBrave, type BraveDocument, type BraveFailure } from './fake.js';
import { pathOf } from '../../helpers/vendor-fake.js';

const NOW = Date.parse('2024-03-01T12:00:00Z');
const WRONG_KEY = 'BSA-wrong-key-0123456789';

type SetupOptions = { provider?: Record<string, unknown>; fake?: { retryAfterSeconds?: number; corpus?: BraveDocument[] } };

async function setup(t: ExecutionContext, { provider = {}, fake = {} }: SetupOptions = {}) {
  const brave = await startFakeBrave({ now: () => NOW, ...fake });
  const gateway = await searchGateway(t, brave, 'brave', { type: 'brave', baseUrl: brave.url, apiKey: BRAVE_KEY, ...provider }, { now: () => NOW });
  return { brave, gateway };
}

/** A search that Brave fails with `failure` (null: as the setup makes it fail), held to the error contract. */
async function failing(t: ExecutionContext, failure: BraveFailure | null, expected: ExpectedError, options: SetupOptions = {}) {
  const { brave, gateway } = await setup(t, options);
  const call = { ...searchCall(gateway, 'brave', 'python'), secrets: [BRAVE_KEY, WRONG_KEY], requests: brave.requests, fail: () => brave.fail(failure) };
  return { brave, ...(await expectUpstreamError(t, call, expected)) };
}

test('the documented request: path, token header, count, page, no decorations; the reply mapped with dates', async (t) => {
  const { brave, gateway } = await setup(t, { provider: { language: 'en-GB', country: 'gb' } });
  const body: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'python frameworks', count: 3 }));

  const request = brave.requests[0]!;
  t.is(request.method, 'GET');
  t.is(pathOf(request), '/res/v1/web/search');
  t.is(request.headers['x-subscription-token'], BRAVE_KEY);
  t.is(request.headers.accept, 'application/json');
  const params = brave.params(0);
  t.is(params.get('q'), 'python frameworks');
  t.is(params.get('count'), '3');
  t.is(params.get('offset'), '0');
  t.is(params.get('search_lang'), 'en-gb', 'the configured default language, in Brave code');
  t.is(params.get('country'), 'gb');
  t.is(params.get('result_filter'), 'web');
  t.is(params.get('text_decorations'), 'false');
  t.false(params.has('freshness'));
  t.false(params.has('goggles'));

  t.deepEqual(resultUrls(body), BRAVE_DOCUMENTS.slice(0, 3).map((document) => document.url));
  const [first, second] = body.data.webPages.value;
  t.is(first.name, 'Top Python Web Frameworks');
  t.is(first.snippet, 'A comprehensive guide to Python web frameworks...');
  t.is(first.datePublished, '2024-02-28T12:00:00.000Z', '"2 days ago" against the request clock');
  t.is(second.name, 'Flask & Django compared');
  t.is(second.snippet, "Python's two classic frameworks, side by side.");
  t.is(second.datePublished, '2023-04-12T14:22:41.000Z', 'page_age, a zone-less ISO time, read as UTC');
});

test('the request language wins over the default and is sent in Brave code; no web section is an empty answer', async (t) => {
  const { brave, gateway } = await setup(t, { provider: { language: 'en' } });
  const german: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'python', count: 5, language: 'de-AT' }));
  t.is(brave.params(0).get('search_lang'), 'de');
  t.true(resultUrls(german).length > 0);
  t.true(resultUrls(german).every((url) => BRAVE_DOCUMENTS.find((document) => document.url === url)!.language === 'de'));

  for (const [language, code] of [['ja', 'jp'], ['zh-TW', 'zh-hant'], ['pt-BR', 'pt-br']] as const) {
    const body: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'python', language }));
    t.is(brave.params(brave.requests.length - 1).get('search_lang'), code);
    t.deepEqual(body.data.webPages.value, [], 'nothing in that language: an empty page, not an error');
  }

  // A language Brave has no search_lang for would be a 422: it is left out, not sent.
  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'python', language: 'sw' }));
  t.false(brave.params(brave.requests.length - 1).has('search_lang'));
});

test('freshness: presets as pd/pw/pm/py and a date range as YYYY-MM-DDtoYYYY-MM-DD', async (t) => {
  const { brave, gateway } = await setup(t);
  const week: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'python', freshness: 'oneWeek' }));
  t.is(brave.params(0).get('freshness'), 'pw');
  t.deepEqual(resultUrls(week), ['https://example.com/python-frameworks']);

  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'python', freshness: 'oneDay' }));
  t.is(brave.params(1).get('freshness'), 'pd');

  const range: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'python', freshness: '2024-01-10..2024-01-12' }));
  t.is(brave.params(2).get('freshness'), '2024-01-10to2024-01-12');
  t.deepEqual(resultUrls(range), ['https://site0.example/note-9', 'https://site1.example/note-10', 'https://site2.example/note-11']);
  t.deepEqual(range.data.webPages.value.map((result: any) => result.datePublished), [
    '2024-01-10T00:00:00.000Z',
    '2024-01-11T00:00:00.000Z',
    '2024-01-12T00:00:00.000Z',
  ]);
});

test('domain filters: included sites as site: operators, excluded ones as an inline Goggle', async (t) => {
  const { brave, gateway } = await setup(t);
  const included: any = await expectSearchOk(
    t,
    await gateway.post('/v1/web-search', { query: 'python', count: 10, includeDomains: ['site1.example', 'site2.example'] }),
  );
  t.is(brave.params(0).get('q'), 'python site:site1.example OR site:site2.example');
  t.is(resultUrls(included).length, 10);
  t.true(resultUrls(included).every((url) => /^https:\/\/site[12]\.example\//.test(url)));

  const excluded: any = await expectSearchOk(
    t,
    await gateway.post('/v1/web-search', { query: 'python', count: 10, excludeDomains: ['site0.example', 'example.com'] }),
  );
  t.is(brave.params(1).get('q'), 'python');
  t.is(brave.params(1).get('goggles'), '$discard,site=site0.example\n$discard,site=example.com');
  t.is(resultUrls(excluded).length, 10);
  t.true(resultUrls(excluded).every((url) => !/site0\.example|\/\/example\.com/.test(url)));
});

test('count above 20 pages through offset 0, 1, 2 (a page number) with a constant count', async (t) => {
  const { brave, gateway } = await setup(t);
  const body: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'python', count: 45 }));
  t.deepEqual(resultUrls(body), BRAVE_DOCUMENTS.slice(0, 45).map((document) => document.url));
  t.deepEqual(brave.requests.map((_, n) => brave.params(n).get('offset')), ['0', '1', '2']);
  t.deepEqual(brave.requests.map((_, n) => brave.params(n).get('count')), ['20', '20', '20']);

});

test('more_results_available: false ends the paging even after a full page', async (t) => {
  const { brave, gateway } = await setup(t, { fake: { corpus: BRAVE_DOCUMENTS.slice(0, 40) } });
  const body: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'python', count: 50 }));
  t.is(resultUrls(body).length, 40);
  t.deepEqual(brave.requests.map((_, n) => brave.params(n).get('offset')), ['0', '1']);
});

test('text mode asks Brave for nothing it cannot give: the same request, page text left to the content chain', async (t) => {
  const { brave, gateway } = await setup(t);
  const body: any = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'python', count: 2, contents: { text: true } }));
  t.deepEqual([...brave.params(0).keys()].sort(), ['count', 'offset', 'q', 'result_filter', 'text_decorations']);
  t.is(resultUrls(body).length, 2);
  for (const result of body.data.webPages.value) t.false('snippet' in result);
});

test('a refused token (422 SUBSCRIPTION_TOKEN_INVALID) is a provider failure: 502 naming brave, never the key', async (t) => {
  // A 422 that names the token is our credentials (auth), not a bad request.
  const { brave } = await failing(t, null, { status: 502, kind: 'auth', mentions: /brave: HTTP 422.*SUBSCRIPTION_TOKEN_INVALID/ }, { provider: { apiKey: WRONG_KEY } });
  t.is(brave.requests[0]!.headers['x-subscription-token'], WRONG_KEY);
});

test('RATE_LIMITED without Retry-After: 503 with the one-second rate window as Retry-After', async (t) => {
  await failing(t, 'rate_limited', { status: 503, kind: 'rate_limited', retryAfter: '1', mentions: /RATE_LIMITED/ });
});

test('RATE_LIMITED with Retry-After: 503 passing the upstream wait on', async (t) => {
  await failing(t, 'rate_limited', { status: 503, kind: 'rate_limited', retryAfter: '7' }, { fake: { retryAfterSeconds: 7 } });
});

test('QUOTA_LIMITED (the monthly quota) is a used-up plan: 503', async (t) => {
  await failing(t, 'quota', { status: 503, kind: 'quota', mentions: /quota/i });
});

test('upstream 5xx is 502, an unreadable reply 502, a stalled upstream 504', async (t) => {
  await failing(t, 'server_error', { status: 502, kind: 'unavailable' });
  await failing(t, 'malformed', { status: 502, kind: 'garbage', mentions: /not JSON/ });
  await failing(t, 'stall', { status: 504, kind: 'timeout' }, { provider: { timeoutMs: 150 } });
});
