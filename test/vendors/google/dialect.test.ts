/**
 * The Google Custom Search JSON API dialect (../shared/spec/dialects.md §5.7, §7.10) over real HTTP:
 * a gateway in front of a scripted upstream (and once the embedded local index), driven as
 * google-api-python-client sends cse.list (key= and alt=json on every call, integers as strings).
 */
import test, { type ExecutionContext } from 'ava';
import type { DialectTools, SearchRoute } from '../../../src/dialects/types.js';
import type { WebSearchRequest } from '../../../src/api/validate.js';
import type { GatewayResult, SearchOutcome } from '../../../src/gateway/search.js';
import { googleDialect } from '../../../src/vendors/google/dialect.js';
import type { GoogleErrorBody, GoogleSearchResponse } from '../../../src/vendors/google/wire.js';
import { TEST_KEY } from '../../helpers/gateway.js';
import { DAY_MS } from '../../helpers/vendor-fake.js';
import {
  dialectBench,
  embeddedDefaultGateway,
  expectKeysNowhere,
  INDEXED_PAGE,
  limitRefusals,
  PAGED,
  PAGED_RESULTS,
  PAGED_TOTAL,
  readRequest,
  STALL_TIMEOUT_MS,
  utcDay,
} from '../../helpers/dialect-bench.js';
const [searchRoute, siterestrictRoute] = googleDialect.routes;

/** GET cse.list as google-api-python-client sends it. */
const cseList = (url: string, query: string, headers: Record<string, string> = {}, path = '/google/customsearch/v1') =>
  fetch(`${url}${path}?${query}&alt=json`, { headers: { accept: 'application/json', ...headers } });

/** Google's error model: code = status, one errors[] entry with the same message, the canonical status name. */
async function expectGoogleError(t: ExecutionContext, response: Response, status: number, canonical: string, reason: string) {
  const text = await response.text();
  t.is(response.status, status, text);
  const { error } = JSON.parse(text) as GoogleErrorBody;
  t.is(error.code, status);
  t.is(error.status, canonical);
  t.deepEqual(error.errors, [{ message: error.message, domain: 'global', reason }]);
  t.regex(response.headers.get('x-log-id') ?? '', /^[0-9a-f]{32}$/);
  return error;
}

const readOf = (query: Record<string, string>) => readRequest(searchRoute!, { method: 'GET', query });

test('cse.list answers Google\'s Search resource: url template, queries, searchInformation, items; no key anywhere in it', async (t) => {
  const { gateway, keys: { working: key } } = await dialectBench(t, PAGED);
  const response = await cseList(gateway.url, `q=postgres+vacuum&cx=017576662512468239146%3Aomuauf_lfve&num=5&key=${key}`);
  t.is(response.status, 200);
  const text = await response.text();
  const body = JSON.parse(text) as GoogleSearchResponse;
  t.is(body.kind, 'customsearch#search');
  t.deepEqual(body.url, {
    type: 'application/json',
    template: `${gateway.url}/google/customsearch/v1?q={searchTerms}&num={count?}&start={startIndex?}&cx={cx?}&key={key?}&alt=json`,
  });
  const request = {
    title: 'searchgate',
    totalResults: String(PAGED_TOTAL),
    searchTerms: 'postgres vacuum',
    count: 5,
    startIndex: 1,
    inputEncoding: 'utf8',
    outputEncoding: 'utf8',
    safe: 'off',
    cx: '017576662512468239146:omuauf_lfve',
  };
  t.deepEqual(body.queries, { request: [request], nextPage: [{ ...request, startIndex: 6 }] });
  t.deepEqual(body.context, { title: 'searchgate' });
  t.like(body.searchInformation, { totalResults: '1320', formattedTotalResults: '1,320' });
  t.is(typeof body.searchInformation.searchTime, 'number');
  t.regex(body.searchInformation.formattedSearchTime, /^\d+\.\d\d$/);
  t.is(body.items!.length, 5);
  t.deepEqual(body.items![0], {
    kind: 'customsearch#result',
    title: 'Routine Vacuuming',
    htmlTitle: 'Routine Vacuuming',
    link: PAGED_RESULTS[0]!.url as string,
    displayLink: 'www.postgresql.org',
    snippet: 'PostgreSQL databases require periodic maintenance known as vacuuming.',
    htmlSnippet: 'PostgreSQL databases require periodic maintenance known as vacuuming.',
    formattedUrl: PAGED_RESULTS[0]!.url as string,
    htmlFormattedUrl: PAGED_RESULTS[0]!.url as string,
    pagemap: { metatags: [{ 'article:published_time': '2024-11-14T00:00:00.000Z' }] },
  });
  t.like(body.items![1], { title: '', snippet: '', link: 'https://untitled.example/page', displayLink: 'untitled.example' });
  t.false('pagemap' in body.items![1]!, 'no pagemap without a date');
  t.like(body.items![2], { title: 'Result 2 <b> & co', htmlTitle: 'Result 2 &lt;b&gt; &amp; co' });
  t.false(text.includes(key.slice(-20)));
  t.is(response.headers.get('x-ratelimit-remaining'), '999');
  t.is(response.headers.get('x-cache'), 'MISS');
});

test('keys: key= first, then X-Goog-Api-Key, then Bearer; the logged query says key=[REDACTED]', async (t) => {
  const { gateway, keys: { working: key } } = await dialectBench(t, PAGED);
  const answers: string[] = [];
  for (const [query, headers] of [
    [`q=x&cx=any&key=${key}`, { 'x-goog-api-key': 'sk-not-a-key-000', authorization: 'Bearer sk-not-a-key-000' }],
    ['q=x&cx=any', { 'x-goog-api-key': key, authorization: 'Bearer sk-not-a-key-000' }],
    ['q=x&cx=any', { authorization: `Bearer ${key}` }],
  ] as const) {
    const response = await cseList(gateway.url, query, headers);
    t.is(response.status, 200, query);
    answers.push(await response.text());
  }
  const refused = await cseList(gateway.url, 'q=x&cx=any&key=sk-not-a-key-000', { 'x-goog-api-key': key });
  const error = await expectGoogleError(t, refused, 400, 'INVALID_ARGUMENT', 'badRequest');
  answers.push(JSON.stringify(error));
  const logged = gateway.logLines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request' && line.route === '/google/customsearch/v1');
  t.true(logged.some((line) => line.query === 'q=x&cx=any&key=[REDACTED]&alt=json'));
  await expectKeysNowhere(t, gateway, [key, 'sk-not-a-key-000'], answers);
});

test('the siterestrict route answers alike, with its own URL template', async (t) => {
  const { gateway } = await dialectBench(t, PAGED);
  const response = await cseList(gateway.url, `q=postgres&cx=any&num=2&key=${TEST_KEY}`, {}, '/google/customsearch/v1/siterestrict');
  t.is(response.status, 200);
  const body = (await response.json()) as GoogleSearchResponse;
  t.is(body.items!.length, 2);
  t.true(body.url.template.startsWith(`${gateway.url}/google/customsearch/v1/siterestrict?q={searchTerms}`));
});

test('start pages (R10): offset start − 1; no items and no nextPage past the results; nothing past the 100th result', async (t) => {
  const { gateway, upstream: { bodies: upstreamBodies } } = await dialectBench(t, PAGED);
  const page = (await (await cseList(gateway.url, `q=x&cx=any&num=5&start=11&key=${TEST_KEY}`)).json()) as GoogleSearchResponse;
  t.deepEqual(page.items!.map((item) => item.link), PAGED_RESULTS.slice(10, 15).map((result) => result.url));
  t.is(page.queries.nextPage![0]!.startIndex, 16);
  t.is(upstreamBodies()[0]!.count, 15);
  const past = (await (await cseList(gateway.url, `q=x&cx=any&start=41&key=${TEST_KEY}`)).json()) as GoogleSearchResponse;
  t.false('items' in past, 'items is absent, not empty, when nothing came back');
  t.is(past.queries.nextPage, undefined);
  t.is(past.searchInformation.totalResults, '1320');
  t.is((await cseList(gateway.url, `q=x&cx=any&num=10&start=91&key=${TEST_KEY}`)).status, 200, 'results 91–100 may be asked for');
  const beyond = await cseList(gateway.url, `q=x&cx=any&num=10&start=92&key=${TEST_KEY}`);
  t.regex((await expectGoogleError(t, beyond, 400, 'INVALID_ARGUMENT', 'badRequest')).message, /start: start \+ num − 1 may not exceed 100/);
});

test('nextPage: only after a full page, and only when the next page ends by the 100th result', (t) => {
  const results: GatewayResult[] = Array.from({ length: 10 }, (_, i) => ({ name: `R${i}`, url: `https://r.example/${i}`, displayUrl: `https://r.example/${i}`, snippet: 's' }));
  const render = (start: number, count: number, returned: number) => {
    const { request, echo } = searchRoute!.read(
      { method: 'GET', query: { q: 'x', cx: 'any', start: String(start), num: String(count) }, body: {}, header: () => undefined },
      { now: Date.now } as DialectTools,
    );
    const outcome: SearchOutcome = { provider: 'up', results: results.slice(0, returned), scores: null, totalEstimatedMatches: 500, someResultsRemoved: false };
    const served = { request: request as WebSearchRequest, echo, outcome, logId: 'l', units: 1, elapsedMs: 5, origin: 'http://h', nowMs: 0 };
    return ((searchRoute as SearchRoute).render(served) as GoogleSearchResponse).queries.nextPage?.[0]?.startIndex;
  };
  t.is(render(81, 10, 10), 91);
  t.is(render(82, 10, 10), undefined, '92–101 would pass the 100th result');
  t.is(render(1, 10, 9), undefined, 'a short page is the last');
  t.is(render(89, 6, 6), 95);
});

test('the request read: site: operators (R8), siteSearch, exactTerms and excludeTerms, dateRestrict and sort (R9), lr', (t) => {
  const now = Date.now();
  t.like(readOf({ q: 'vacuum site:postgresql.org', cx: 'any' }), { query: 'vacuum', includeDomains: ['postgresql.org'], count: 10, offset: 0 });
  t.like(readOf({ q: 'vacuum', cx: 'any', siteSearch: 'www.postgresql.org' }), { includeDomains: ['postgresql.org'], excludeDomains: [] });
  t.like(readOf({ q: 'vacuum', cx: 'any', siteSearch: 'reddit.com', siteSearchFilter: 'e' }), { includeDomains: [], excludeDomains: ['reddit.com'] });
  t.like(readOf({ q: 'vacuum', cx: 'any', exactTerms: 'full vacuum', excludeTerms: 'mysql' }), { query: 'vacuum "full vacuum" -mysql' });
  t.like(readOf({ q: 'vacuum', cx: 'any', excludeTerms: 'vacuum cleaner' }), { query: 'vacuum -"vacuum cleaner"' });
  for (const [dateRestrict, raw] of [
    ['d1', 'oneDay'],
    ['d', 'oneDay'],
    ['w1', 'oneWeek'],
    ['m1', 'oneMonth'],
    ['y1', 'oneYear'],
    ['d7', `${utcDay(now - 7 * DAY_MS)}..${utcDay(now)}`],
    ['w2', `${utcDay(now - 14 * DAY_MS)}..${utcDay(now)}`],
  ]) {
    t.is(readOf({ q: 'x', cx: 'any', dateRestrict: dateRestrict! }).freshness.raw, raw, dateRestrict);
  }
  t.is(readOf({ q: 'x', cx: 'any', sort: 'date:r:20240105:20240131', dateRestrict: 'd1' }).freshness.raw, '2024-01-05..2024-01-31', 'the range wins');
  t.is(readOf({ q: 'x', cx: 'any', sort: 'date:r::20231231' }).freshness.raw, '1970-01-01..2023-12-31');
  t.is(readOf({ q: 'x', cx: 'any', sort: 'date' }).freshness.raw, 'noLimit', 'sorting by date is ignored');
  t.is(readOf({ q: 'x', cx: 'any', lr: 'lang_de' }).language, 'de');
  t.is(readOf({ q: 'x', cx: 'any', lr: 'lang_zh-TW' }).language, 'zh-TW');
  t.is(readOf({ q: 'x', cx: 'any', lr: 'lang_iw' }).language, 'he');
  t.is(readOf({ q: 'x', cx: 'any', hl: 'fr', gl: 'fr', safe: 'active', prettyPrint: 'false' }).language, null, 'hl and the rest are ignored');
  t.like(siterestrictRoute!.read({ method: 'GET', query: { q: 'x', cx: 'any', num: '3', start: '4' }, body: {}, header: () => undefined }, { now: Date.now } as DialectTools).request, {
    count: 3,
    offset: 3,
  });
});

test('invalid requests are 400 INVALID_ARGUMENT before the key is looked at, and never charged (R4)', async (t) => {
  const { gateway, keys: { working: key } } = await dialectBench(t, PAGED);
  const cases: Array<[string, RegExp]> = [
    ['cx=any', /q is required/],
    ['q=x', /cx is required/],
    ['q=%20&cx=any', /q must not be empty or blank/],
    ['q=x&cx=any&num=0', /num: Valid values are integers between 1 and 10, inclusive/],
    ['q=x&cx=any&num=11', /num: Valid values are integers between 1 and 10, inclusive/],
    ['q=x&cx=any&num=ten', /num must be integer/],
    ['q=x&cx=any&start=0', /start/],
    ['q=x&cx=any&searchType=image', /searchType: searchgate has no image search/],
    ['q=x&cx=any&alt=proto', /alt/],
    ['q=x&cx=any&dateRestrict=x5', /dateRestrict/],
    ['q=x&cx=any&sort=date:r:20240230:20240301', /sort: 20240230 is not a date/],
    ['q=x&cx=any&sort=date:r:2024', /sort: a date range is date:r:YYYYMMDD:YYYYMMDD/],
    ['q=x&cx=any&sort=date:r:20240301:20240201', /after its end/],
    ['q=x&cx=any&siteSearchFilter=x', /siteSearchFilter/],
    ['q=x&cx=any&lr=english', /lr/],
  ];
  for (const keyParameter of [`key=${key}`, 'key=sk-not-a-key-000', '']) {
    for (const [query, message] of cases) {
      const response = await fetch(`${gateway.url}/google/customsearch/v1?${query}&${keyParameter}`);
      const error = await expectGoogleError(t, response, 400, 'INVALID_ARGUMENT', 'badRequest');
      t.regex(error.message, /^Request contains an invalid argument\. \(searchgate: /, query);
      t.regex(error.message, message, query);
    }
  }
  const ok = await cseList(gateway.url, `q=x&cx=any&key=${key}`);
  t.is(ok.headers.get('x-ratelimit-remaining'), '999');
});

test('§7.10 keys: missing 403 PERMISSION_DENIED; unknown and deleted 400 API_KEY_INVALID with its ErrorInfo; disabled account 403', async (t) => {
  const { gateway, keys: { deleted: deletedKey, disabled: disabledKey } } = await dialectBench(t, PAGED);
  const missing = await expectGoogleError(t, await cseList(gateway.url, 'q=x&cx=any'), 403, 'PERMISSION_DENIED', 'forbidden');
  t.regex(missing.message, /^Method doesn't allow unregistered callers \(callers without established identity\)\. Please use API Key or other form of API consumer identity to call this API\. \(searchgate: no API key: /);
  const errorInfo = (reason: string) => [
    { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com', metadata: { service: 'customsearch.googleapis.com' } },
  ];
  for (const [key, why] of [
    ['sk-not-a-key-000', /invalid API key/],
    [deletedKey, /has been deleted/],
  ] as const) {
    const refused = await cseList(gateway.url, `q=x&cx=any&key=${key}`);
    const error = await expectGoogleError(t, refused, 400, 'INVALID_ARGUMENT', 'badRequest');
    t.regex(error.message, /^API key not valid\. Please pass a valid API key\. \(searchgate: /);
    t.regex(error.message, why);
    t.deepEqual(error.details, errorInfo('API_KEY_INVALID'));
    t.regex(refused.statusText, /^Bad Request - (invalid API key|API key sg_[0-9a-f]+\.* has been deleted)/);
  }
  const disabled = await expectGoogleError(t, await cseList(gateway.url, `q=x&cx=any&key=${disabledKey}`), 403, 'PERMISSION_DENIED', 'forbidden');
  t.regex(disabled.message, /^Permission denied: Consumer has been suspended\. \(searchgate: .*disabled/);
  t.deepEqual(disabled.details, errorInfo('CONSUMER_SUSPENDED'));
  await expectKeysNowhere(t, gateway, [deletedKey, disabledKey]);
});

test('allowance exhausted and rate limited are 429 RESOURCE_EXHAUSTED, with Retry-After and X-RateLimit-Scope', async (t) => {
  const now = Date.UTC(2026, 10, 23, 12);
  const bench = await dialectBench(t, { ...PAGED, now });
  const { exhausted, limited } = await limitRefusals(t, bench, (key, q) => cseList(bench.gateway.url, `q=${q}&cx=any&key=${key}`));
  const quota = await expectGoogleError(t, exhausted, 429, 'RESOURCE_EXHAUSTED', 'rateLimitExceeded');
  t.regex(quota.message, /^Quota exceeded for quota metric 'Queries' and limit 'Queries per day'\. \(searchgate: daily allowance exhausted/);
  const rate = await expectGoogleError(t, limited, 429, 'RESOURCE_EXHAUSTED', 'rateLimitExceeded');
  t.regex(rate.message, /^Quota exceeded for quota metric 'Queries' and limit 'Queries per minute'\. \(searchgate: rate limit exceeded/);
});

for (const [query, status, canonical] of [
  ['failure', 502, 'UNAVAILABLE'],
  ['unavailable', 503, 'UNAVAILABLE'],
  ['timeout', 504, 'DEADLINE_EXCEEDED'],
] as const) {
  test(`an upstream ${query} is ${status} ${canonical} backendError, refunded`, async (t) => {
    const { gateway, keys: { working: key } } = await dialectBench(t, query === 'timeout' ? { ...PAGED, timeoutMs: STALL_TIMEOUT_MS } : PAGED);
    await expectGoogleError(t, await cseList(gateway.url, `q=${query}&cx=any&key=${key}`), status, canonical, 'backendError');
    const next = await cseList(gateway.url, `q=fine&cx=any&key=${key}`);
    t.is(next.headers.get('x-ratelimit-remaining'), '999');
  });
}

test('404 under the prefix is NOT_FOUND naming the routes; POST is 405 with Allow', async (t) => {
  const { gateway } = await dialectBench(t, PAGED);
  const notFound = await expectGoogleError(t, await fetch(`${gateway.url}/google/customsearch/v2?q=x&key=${TEST_KEY}`), 404, 'NOT_FOUND', 'notFound');
  t.regex(notFound.message, /^no route for GET \/google\/customsearch\/v2; searchgate serves GET \/google\/customsearch\/v1, GET \/google\/customsearch\/v1\/siterestrict here$/);
  const post = await fetch(`${gateway.url}/google/customsearch/v1?q=x&cx=any&key=${TEST_KEY}`, { method: 'POST' });
  await expectGoogleError(t, post, 405, 'UNIMPLEMENTED', 'methodNotAllowed');
  t.regex(post.headers.get('allow') ?? '', /GET/);
});

test('the embedded default: the local index answers cse.list', async (t) => {
  const gateway = await embeddedDefaultGateway(t);
  const body = (await (await cseList(gateway.url, `q=vacuuming&cx=any&num=3&key=${TEST_KEY}`)).json()) as GoogleSearchResponse;
  t.like(body.items![0], { link: INDEXED_PAGE.url, title: INDEXED_PAGE.title, displayLink: 'docs.postgres.example' });
  t.deepEqual(body.items![0]!.pagemap, { metatags: [{ 'article:published_time': INDEXED_PAGE.datePublished! }] });
  t.is(body.searchInformation.totalResults, '1');
});
