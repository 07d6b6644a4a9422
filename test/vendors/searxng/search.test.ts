import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import type { RunningGateway } from '../../helpers/gateway.js';
import { searchGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, searchCall, type ExpectedError } from '../../helpers/upstream-errors.js';
import { startFakeSearxng, type FakeSearxng, type SearxngDoc, type SearxngMode } from './fake.js';
import { pathOf, queryOf } from '../../helpers/vendor-fake.js';

const NOW = Date.parse('2026-03-20T12:00:00Z');
const PROXY_KEY = 'proxy-secret-4f1c9a';
const WRONG_PROXY_KEY = 'wrong-proxy-key-77';

/** 25 documents, one per day back from 2026-03-19, on two sites. */
const CORPUS: SearxngDoc[] = Array.from({ length: 25 }, (_, i) => ({
  url: `https://${i % 2 ? 'docs.alpha.example' : 'beta.example'}/page-${i}`,
  title: `Result ${i}`,
  content: `Snippet of result ${i}`,
  publishedDate: i === 3 ? null : new Date(Date.parse('2026-03-19T08:30:00Z') - i * 86_400_000).toISOString().slice(0, 19),
}));

async function setup(t: ExecutionContext, providerOptions: Record<string, unknown> = {}, fakeOptions: { pageSize?: number; requiredAuthorization?: string } = {}) {
  const fake = await startFakeSearxng({ corpus: CORPUS, ...fakeOptions });
  const gateway = await searchGateway(t, fake, 'sx', { type: 'searxng', baseUrl: fake.url, ...providerOptions }, { now: () => NOW });
  return { fake, gateway };
}

/** A search that SearXNG answers in `mode` ('ok': as the setup makes it fail), held to the error contract. */
const failing = (t: ExecutionContext, { fake, gateway }: { fake: FakeSearxng; gateway: RunningGateway }, mode: SearxngMode, expected: ExpectedError) =>
  expectUpstreamError(t, { ...searchCall(gateway, 'sx', 'q'), secrets: [PROXY_KEY, WRONG_PROXY_KEY], requests: fake.requests, fail: () => (fake.state.mode = mode) }, expected);

test('the request: GET /search with format=json, site: operators, pageno, a preset as time_range, language, categories, safesearch and proxy credentials', async (t) => {
  const { fake, gateway } = await setup(t, { apiKey: PROXY_KEY, headers: { 'x-forwarded-user': 'searchgate' }, safesearch: 1 }, { requiredAuthorization: `Bearer ${PROXY_KEY}` });
  await expectSearchOk(
    t,
    await gateway.post('/v1/web-search', {
      query: 'rust async',
      count: 5,
      freshness: 'oneWeek',
      includeDomains: ['alpha.example', 'beta.example'],
      excludeDomains: ['docs.beta.example'],
      language: 'pt-BR',
    }),
  );
  const [request] = fake.requests;
  t.is(request!.method, 'GET');
  t.is(pathOf(request!), '/search');
  t.deepEqual(queryOf(request!), {
    q: 'rust async (site:alpha.example OR site:beta.example) -site:docs.beta.example',
    format: 'json',
    pageno: '1',
    categories: 'general',
    time_range: 'week',
    language: 'pt-BR',
    safesearch: '1',
  });
  t.is(request!.headers.authorization, `Bearer ${PROXY_KEY}`);
  t.is(request!.headers['x-forwarded-user'], 'searchgate');
  t.regex(String(request!.headers['user-agent']), /searchgate/);
});

test('presets map to day/week/month/year; a date range sends the shortest covering time_range and the gateway filters by publishedDate', async (t) => {
  const { fake, gateway } = await setup(t, { language: 'de', engines: 'google,bing' });
  for (const [freshness, timeRange] of [['oneDay', 'day'], ['oneMonth', 'month'], ['oneYear', 'year']]) {
    await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'q', freshness }));
    t.is(queryOf(fake.requests.at(-1)!).time_range, timeRange);
  }
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'q', count: 10, freshness: '2026-03-10..2026-03-15' }));
  const sent = queryOf(fake.requests.at(-1)!);
  t.is(sent.time_range, 'month', 'the range starts 10 days back: a week is too short, a month holds it');
  // The request named no language, so the configured default applies; engines replace categories.
  t.is(sent.language, 'de');
  t.is(sent.engines, 'google,bing');
  t.false('categories' in sent);
  const value = body.data.webPages.value as Array<{ url: string; datePublished?: string }>;
  // Only the dated results inside the range survive (result 3 has no date; 4..9 are 10..15 March).
  t.deepEqual(
    value.map((r) => r.url),
    [4, 5, 6, 7, 8, 9].map((i) => CORPUS[i]!.url),
  );
  t.is(value[0]!.datePublished, '2026-03-15T08:30:00.000Z');
  // A range reaching back beyond a year gets no time_range at all.
  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'q', freshness: '2024-01-01..2024-02-01' }));
  t.false('time_range' in queryOf(fake.requests.at(-1)!));
});

test('the reply maps to names, urls, snippets and ISO dates; count is honoured by paging pageno 1, 2, 3', async (t) => {
  const { fake, gateway } = await setup(t, {}, { pageSize: 10 });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'paging', count: 23 }));
  const value = body.data.webPages.value as Array<{ name: string; url: string; snippet: string; datePublished?: string }>;
  t.is(value.length, 23);
  t.deepEqual(
    value.map((r) => r.url),
    CORPUS.slice(0, 23).map((doc) => doc.url),
  );
  t.deepEqual(value[0], {
    ...value[0],
    name: 'Result 0',
    url: CORPUS[0]!.url,
    snippet: 'Snippet of result 0',
    datePublished: '2026-03-19T08:30:00.000Z',
  });
  t.false('datePublished' in value[3]!, 'a null publishedDate gives no date');
  t.deepEqual(
    fake.requests.map((request) => queryOf(request).pageno),
    ['1', '2', '3'],
  );

  // Asking for more than the instance has: paging stops at the first empty page.
  fake.requests.length = 0;
  const all = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'paging', count: 40 }));
  t.is(all.data.webPages.value.length, 25);
  t.deepEqual(
    fake.requests.map((request) => queryOf(request).pageno),
    ['1', '2', '3', '4'],
  );
});

test('JSON output disabled (403) is a 502 telling the operator to add json to search.formats', async (t) => {
  const mentions = /JSON output is disabled on this SearXNG instance: add json to search\.formats in settings\.yml/;
  const { body } = await failing(t, await setup(t), 'json-disabled', { status: 502, kind: 'auth', mentions });
  t.notRegex(body.message, /proxy/, 'no proxy is configured, so no proxy hint');
});

test('no results while every engine is rate-limited or CAPTCHA-blocked is a 503, not an empty 200', async (t) => {
  await failing(t, await setup(t), 'blind-rate-limited', { status: 503, kind: 'rate_limited', mentions: [/brave: Suspended: too many requests/, /duckduckgo: CAPTCHA/] });
});

test('no results because every engine timed out is a 502; no results with healthy engines is an empty 200', async (t) => {
  const searxng = await setup(t);
  await failing(t, searxng, 'blind-timeout', { status: 502, kind: 'unavailable', mentions: /bing: timeout/ });

  searxng.fake.state.mode = 'empty-healthy';
  const empty = await expectSearchOk(t, await searxng.gateway.post('/v1/web-search', { query: 'nothing at all' }));
  t.deepEqual(empty.data.webPages.value, []);
});

test("the limiter's 429 is a 503 naming the fix", async (t) => {
  await failing(t, await setup(t), 'limiter', { status: 503, kind: 'rate_limited', mentions: [/limiter/, /pass_ip/] });
});

test('5xx and malformed replies are 502, a stalled instance 504', async (t) => {
  const searxng = await setup(t);
  await failing(t, searxng, 'server-error', { status: 502, kind: 'unavailable' });
  await failing(t, searxng, 'malformed', { status: 502, kind: 'garbage', mentions: /not JSON/ });
  await failing(t, await setup(t, { timeoutMs: 300 }), 'stall', { status: 504, kind: 'timeout' });
});

test("an authenticating proxy's refusal is a 502 that never shows the key", async (t) => {
  const refused = await setup(t, { apiKey: WRONG_PROXY_KEY }, { requiredAuthorization: `Bearer ${PROXY_KEY}` });
  await failing(t, refused, 'ok', { status: 502, kind: 'auth' });
});
