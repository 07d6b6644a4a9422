/**
 * The Brave dialect over real HTTP (../shared/spec/dialects.md §5.3, §6.7–6.8, §7.6): GET and POST
 * /brave/res/v1/web/search against a running gateway with a scripted search upstream, over the
 * embedded local index, and through searchgate's own Brave provider and the Brave fake (a Brave
 * client's request, all the way to Brave). LangChain's and litellm's Brave clients run in
 * test/clients/.
 */
import { request as httpRequest } from 'node:http';
import test, { type ExecutionContext } from 'ava';
import { searchOk } from '../../helpers/faults.js';
import { TEST_KEY } from '../../helpers/gateway.js';
import {
  dialectBench,
  embeddedDefaultGateway,
  json,
  leakSurfaces,
  numberedResults,
  postJson,
  STALL_TIMEOUT_MS,
  UPSTREAM_FAILURES,
  UPSTREAM_RESULTS,
  type DialectBench,
} from '../../helpers/dialect-bench.js';
import { braveBackedGateway } from './fake.js';

const PATH = '/brave/res/v1/web/search';
/** 12:00:00.250 UTC: the per-second window resets in 1 s, the daily allowance in 12 h. */
const NOON = Date.UTC(2026, 10, 23, 12, 0, 0, 250);
const HALF_DAY_SECONDS = 43_200;

const token = (key: string) => ({ 'x-subscription-token': key });

/** A GET of the search route with these parameters and headers. */
const braveGet = (bench: DialectBench, params: Record<string, string>, headers: Record<string, string> = token(TEST_KEY)) =>
  fetch(`${bench.gateway.url}${PATH}?${new URLSearchParams(params)}`, { headers });

/**
 * A Brave error: the status, exactly Brave's ErrorResponse with the log_id as error.id, and the
 * reason phrase naming searchgate's reason; returns `error`.
 */
async function expectBraveError(t: ExecutionContext, response: Response, status: number, code: string) {
  const body = await json(response);
  t.is(response.status, status, JSON.stringify(body));
  t.deepEqual(Object.keys(body), ['type', 'error', 'time']);
  t.is(body.type, 'ErrorResponse');
  t.deepEqual(Object.keys(body.error), ['id', 'status', 'code', 'detail', 'meta']);
  t.like(body.error, { id: response.headers.get('x-log-id'), status, code });
  t.regex(body.error.id, /^[0-9a-f]{32}$/);
  t.true(Number.isInteger(body.time) && Math.abs(body.time - Date.now() / 1000) < 60);
  t.true(response.statusText.length > 4 && response.statusText.length <= 80, response.statusText);
  return body.error;
}

test('GET answers in Brave\'s shape: the web section with every field its clients read', async (t) => {
  const bench = await dialectBench(t);
  const response = await braveGet(bench, { q: 'postgres vacuum', extra_snippets: 'True' });
  t.is(response.status, 200);
  const body = await json(response);
  t.deepEqual(Object.keys(body), ['type', 'query', 'web']);
  t.deepEqual(body.query, { original: 'postgres vacuum', more_results_available: false });
  t.is(body.web.type, 'search');
  t.deepEqual(body.web.results, [
    {
      type: 'search_result',
      title: 'Routine Vacuuming',
      url: UPSTREAM_RESULTS[0]!.url,
      description: UPSTREAM_RESULTS[0]!.snippet,
      page_age: '2024-11-14T00:00:00',
      meta_url: { scheme: 'https', netloc: 'www.postgresql.org', hostname: 'www.postgresql.org', path: '/docs/current/routine-vacuuming.html' },
    },
    // An untitled result has an empty title, never its address made up as one (R6); no date, no page_age.
    {
      type: 'search_result',
      title: '',
      url: UPSTREAM_RESULTS[1]!.url,
      description: UPSTREAM_RESULTS[1]!.snippet,
      meta_url: { scheme: 'https', netloc: 'wiki.example.org', hostname: 'wiki.example.org', path: '/vacuum' },
    },
    {
      type: 'search_result',
      title: 'Vacuum cleaners reviewed',
      url: UPSTREAM_RESULTS[2]!.url,
      description: UPSTREAM_RESULTS[2]!.snippet,
      meta_url: { scheme: 'https', netloc: 'shop.example.com', hostname: 'shop.example.com', path: '/vacuums' },
    },
  ]);
  t.deepEqual(bench.upstream.lastBody(), { query: 'postgres vacuum', count: 20, freshness: 'noLimit' }, "Brave's default count is 20");
  t.regex(response.headers.get('x-log-id') ?? '', /^[0-9a-f]{32}$/);
  t.is(response.headers.get('x-cache'), 'MISS');
  t.is(response.headers.get('x-ratelimit-limit'), null, 'an operator key has no allowance, hence no rate headers');

  const again = await braveGet(bench, { q: 'postgres vacuum' });
  t.is(again.headers.get('x-cache'), 'HIT');
  t.is(bench.upstream.requests.length, 1);
});

test('POST takes a JSON body (query-string parameters count too, the body wins); nulls are absent; unknown fields are ignored', async (t) => {
  const bench = await dialectBench(t);
  const response = await postJson(bench.gateway, `${PATH}?count=7&offset=0`, { q: 'postgres', count: 3, freshness: null, offset: null, country: 'de', novel: 1 }, token(TEST_KEY));
  t.is(response.status, 200);
  t.is((await json(response)).web.results.length, 3);
  t.deepEqual(bench.upstream.lastBody(), { query: 'postgres', count: 3, freshness: 'noLimit' });

  const bodyOnly = await postJson(bench.gateway, PATH, { q: 'postgres', count: null }, token(TEST_KEY));
  t.is(bodyOnly.status, 200);
  t.is(bench.upstream.lastBody().count, 20);

  const invalid = await postJson(bench.gateway, PATH, { q: 'postgres', count: 'many' }, token(TEST_KEY));
  const error = await expectBraveError(t, invalid, 422, 'VALIDATION');
  t.like(error.meta.errors[0], { type: 'value_error', loc: ['body', 'count'], input: 'many' });
});

test("litellm's GET: a JSON Content-Type without a body, include_fetch_metadata=True, and its (q) AND (site:…) wrapper", async (t) => {
  const bench = await dialectBench(t);
  const params = new URLSearchParams({ q: '(postgres vacuum) AND (site:postgresql.org OR site:wiki.example.org)', include_fetch_metadata: 'True', count: '3' });
  const response = await fetch(`${bench.gateway.url}${PATH}?${params}`, {
    headers: { ...token(TEST_KEY), 'content-type': 'application/json', accept: 'application/json' },
  });
  t.is(response.status, 200);
  t.deepEqual(bench.upstream.lastBody(), { query: 'postgres vacuum', count: 3, freshness: 'noLimit', includeDomains: ['postgresql.org', 'wiki.example.org'] });
});

test('a GET that declares an empty body of another type is still a search: GET ignores Content-Type', async (t) => {
  const bench = await dialectBench(t);
  const status = await new Promise<number>((resolve, reject) => {
    const request = httpRequest(`${bench.gateway.url}${PATH}?q=plain`, { headers: { ...token(TEST_KEY), 'content-type': 'text/plain', 'content-length': '0' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    request.on('error', reject);
    request.end();
  });
  t.is(status, 200);
});

test('site: operators become domain filters unless operators=false; inline Goggles discard sites', async (t) => {
  const bench = await dialectBench(t);
  const upstreamSees = async (params: Record<string, string>) => {
    const response = await braveGet(bench, params);
    t.is(response.status, 200, JSON.stringify(await response.clone().json()));
    return bench.upstream.lastBody();
  };
  t.like(await upstreamSees({ q: 'vacuum site:postgresql.org -site:shop.example.com' }), {
    query: 'vacuum',
    includeDomains: ['postgresql.org'],
    excludeDomains: ['shop.example.com'],
  });
  const literal = await upstreamSees({ q: 'vacuum site:postgresql.org', operators: 'False' });
  t.is(literal.query, 'vacuum site:postgresql.org');
  t.false('includeDomains' in literal);
  t.like(await upstreamSees({ q: 'vacuum', operators: '1', goggles: '$boost=3,site=docs.example\n$discard,site=shop.example.com\n$site=spam.example,discard' }), {
    query: 'vacuum',
    excludeDomains: ['shop.example.com', 'spam.example'],
  });
  t.false('excludeDomains' in (await upstreamSees({ q: 'vacuum cleaner', goggles: 'https://example.com/hosted.goggle' })));
});

test('freshness: pd/pw/pm/py as presets, YYYY-MM-DDtoYYYY-MM-DD as a day range; anything else is 422 VALIDATION', async (t) => {
  const bench = await dialectBench(t);
  for (const [freshness, expected] of [['pd', 'oneDay'], ['pw', 'oneWeek'], ['pm', 'oneMonth'], ['py', 'oneYear'], ['2024-01-05to2024-02-01', '2024-01-05..2024-02-01']]) {
    t.is((await braveGet(bench, { q: `fresh ${freshness}`, freshness: freshness! })).status, 200);
    t.is(bench.upstream.lastBody().freshness, expected, freshness);
  }
  for (const freshness of ['yesterday', '2024-02-01to2024-01-05', '2024-13-01to2024-12-01']) {
    const error = await expectBraveError(t, await braveGet(bench, { q: 'fresh', freshness }), 422, 'VALIDATION');
    t.like(error.meta.errors[0], { type: 'value_error', loc: ['query', 'freshness'] });
  }
});

test('an impossible day in a freshness range is 422 VALIDATION, not the next month', async (t) => {
  const bench = await dialectBench(t);
  await expectBraveError(t, await braveGet(bench, { q: 'fresh', freshness: '2024-02-30to2024-03-05' }), 422, 'VALIDATION');
});

test('count above 20 is served as 20; offset is a page index (offset × count); past page 9 the page is empty', async (t) => {
  const bench = await dialectBench(t);
  bench.upstream.answer(numberedResults);
  const page = async (params: Record<string, string>) => {
    const response = await braveGet(bench, { q: 'numbers', ...params });
    t.is(response.status, 200);
    return json(response);
  };
  const capped = await page({ count: '50' });
  t.is(capped.web.results.length, 20);
  t.true(capped.query.more_results_available);

  const second = await page({ count: '2', offset: '1' });
  t.deepEqual(second.web.results.map((result: any) => result.title), ['Result 2', 'Result 3']);
  t.is(bench.upstream.lastBody().count, 4, 'the gateway gathers the results up to the end of the page');
  t.true(second.query.more_results_available);

  const last = await page({ count: '2', offset: '9' });
  t.deepEqual(last.web.results.map((result: any) => result.title), ['Result 18', 'Result 19']);
  t.false(last.query.more_results_available, 'Brave has no page after the tenth');

  const beyond = await page({ count: '2', offset: '10' });
  t.deepEqual(beyond, { type: 'search', query: { original: 'numbers', more_results_available: false } });

  const error = await expectBraveError(t, await braveGet(bench, { q: 'numbers', count: '0' }), 422, 'VALIDATION');
  t.deepEqual(error.meta, { errors: [{ type: 'value_error', loc: ['query', 'count'], msg: 'count must be >= 1', input: 0 }] });
});

test('result_filter without web leaves the web section out; no results, no web section (never null)', async (t) => {
  const bench = await dialectBench(t);
  t.deepEqual(Object.keys(await json(await braveGet(bench, { q: 'postgres', result_filter: 'news,videos' }))), ['type', 'query']);
  t.truthy((await json(await braveGet(bench, { q: 'postgres', result_filter: 'news, Web' }))).web);
  bench.upstream.answer(searchOk([]));
  t.deepEqual(await json(await braveGet(bench, { q: 'nothing at all' })), { type: 'search', query: { original: 'nothing at all', more_results_available: false } });
});

test("search_lang reaches the upstream as the request's language: through searchgate's Brave provider, back to Brave's code", async (t) => {
  const { gateway, lastSearchLanguage } = await braveBackedGateway(t);
  // Brave's codes that are no BCP 47 tag (jp, zh-hant, pt-br) go through the request as ja, zh-Hant, pt-BR and back.
  for (const code of ['jp', 'zh-hant', 'pt-br', 'de']) {
    const response = await fetch(`${gateway.url}${PATH}?q=python&search_lang=${code}`, { headers: token(TEST_KEY) });
    t.is(response.status, 200);
    t.is(lastSearchLanguage(), code);
  }
  const body = await json(await fetch(`${gateway.url}${PATH}?q=python&count=2`, { headers: token(TEST_KEY) }));
  t.deepEqual(body.web.results.map((result: any) => result.title), ['Top Python Web Frameworks', 'Flask & Django compared']);
  t.is(body.web.results[1].page_age, '2023-04-12T14:22:41');
});

test('the key: X-Subscription-Token first, then Bearer; missing is 422 VALIDATION naming the header', async (t) => {
  const bench = await dialectBench(t);
  const { key } = await bench.accountKey();
  t.is((await braveGet(bench, { q: 'a' }, token(key))).status, 200);
  t.is((await braveGet(bench, { q: 'b' }, { authorization: `Bearer ${key}` })).status, 200);
  t.is((await braveGet(bench, { q: 'c' }, { ...token(key), authorization: 'Bearer sg_wrong' })).status, 200, 'the header wins');
  const bearerIgnored = await expectBraveError(t, await braveGet(bench, { q: 'd' }, { ...token('sg_wrong'), authorization: `Bearer ${key}` }), 422, 'SUBSCRIPTION_TOKEN_INVALID');
  t.regex(bearerIgnored.detail, /^The provided subscription token is invalid\. \(searchgate: invalid API key\)$/);

  const missing = await braveGet(bench, { q: 'e' }, {});
  const error = await expectBraveError(t, missing, 422, 'VALIDATION');
  t.is(error.detail.split(' (searchgate: ')[0], 'Unable to validate request parameter(s)');
  t.regex(error.detail, /X-Subscription-Token/);
  t.deepEqual(error.meta, { errors: [{ type: 'missing', loc: ['header', 'x-subscription-token'], msg: 'Field required', input: null }] });
  t.regex(missing.statusText, /^Unprocessable Entity - no API key/);
});

test('§7.6: deleted key, disabled account, invalid request (before the key is looked at), not charged', async (t) => {
  const bench = await dialectBench(t);
  const account = await bench.accountKey({ dailyAllowance: 10 });

  const missingQ = await expectBraveError(t, await braveGet(bench, { count: '3' }, token('sg_not_a_key')), 422, 'VALIDATION');
  t.deepEqual(missingQ.meta, { errors: [{ type: 'missing', loc: ['query', 'q'], msg: 'Field required', input: null }] });
  t.is(missingQ.detail, 'Unable to validate request parameter(s) (searchgate: q is required)');
  const blank = await expectBraveError(t, await braveGet(bench, { q: '   ' }, token(account.key)), 422, 'VALIDATION');
  t.deepEqual(blank.meta, { errors: [{ type: 'value_error', loc: ['query', 'q'], msg: 'q must not be empty or blank', input: '   ' }] });
  const onlyOperators = await expectBraveError(t, await braveGet(bench, { q: 'site:example.com' }, token(account.key)), 422, 'VALIDATION');
  t.like(onlyOperators.meta.errors[0], { loc: ['query', 'q'], input: 'site:example.com' });
  const charged = await braveGet(bench, { q: 'first' }, token(account.key));
  t.is(charged.headers.get('x-ratelimit-remaining'), '9', 'the refused requests were not charged');

  await account.disableAccount();
  const disabled = await expectBraveError(t, await braveGet(bench, { q: 'x' }, token(account.key)), 403, 'SUBSCRIPTION_TOKEN_INVALID');
  t.regex(disabled.detail, /^account "client-1" is disabled/);
  t.deepEqual(disabled.meta, { component: 'authentication' });

  const deletedResponse = await braveGet(bench, { q: 'x' }, token(bench.keys.deleted));
  const deleted = await expectBraveError(t, deletedResponse, 422, 'SUBSCRIPTION_TOKEN_INVALID');
  t.regex(deleted.detail, /^The provided subscription token is invalid\. \(searchgate: API key sg_\w+… has been deleted/);
  t.regex(deletedResponse.statusText, /^Unprocessable Entity - API key sg_\w+ has been deleted/, 'printable ASCII only');
  t.is(bench.upstream.requests.length, 1);
});

test("account answers carry Brave's two-window rate headers: per second and per day, reset in seconds", async (t) => {
  const bench = await dialectBench(t);
  bench.clock.now = NOON;
  const { key } = await bench.accountKey({ dailyAllowance: 100, ratePerSecond: 5 });
  const first = await braveGet(bench, { q: 'one' }, token(key));
  t.is(first.status, 200);
  const rateHeaders = (response: Response) =>
    Object.fromEntries(['limit', 'policy', 'remaining', 'reset'].map((name) => [name, response.headers.get(`x-ratelimit-${name}`)]));
  t.deepEqual(rateHeaders(first), { limit: '5, 100', policy: '5;w=1, 100;w=86400', remaining: '4, 99', reset: `1, ${HALF_DAY_SECONDS}` });
  t.deepEqual(rateHeaders(await braveGet(bench, { q: 'two' }, token(key))), { limit: '5, 100', policy: '5;w=1, 100;w=86400', remaining: '3, 98', reset: `1, ${HALF_DAY_SECONDS}` });

  // Without a per-second limit there is one window, the day's.
  const { key: daily } = await bench.accountKey({ dailyAllowance: 100 });
  t.deepEqual(rateHeaders(await braveGet(bench, { q: 'three' }, token(daily))), { limit: '100', policy: '100;w=86400', remaining: '99', reset: String(HALF_DAY_SECONDS) });

  // A failure after the charge carries them too (its charge is refunded, not shown until the next answer).
  bench.upstream.answer(UPSTREAM_FAILURES.failure);
  const failed = await braveGet(bench, { q: 'four' }, token(key));
  t.is(failed.status, 502);
  t.deepEqual(rateHeaders(failed), { limit: '5, 100', policy: '5;w=1, 100;w=86400', remaining: '2, 97', reset: `1, ${HALF_DAY_SECONDS}` });
});

test('429 RATE_LIMITED and QUOTA_LIMITED carry the limits in meta and in the rate headers', async (t) => {
  const bench = await dialectBench(t);
  bench.clock.now = NOON;
  const { key } = await bench.accountKey({ dailyAllowance: 100, ratePerSecond: 1 });
  t.is((await braveGet(bench, { q: 'one' }, token(key))).status, 200);
  const limited = await braveGet(bench, { q: 'two' }, token(key));
  const rate = await expectBraveError(t, limited, 429, 'RATE_LIMITED');
  t.regex(rate.detail, /^Request rate limit exceeded for plan\. \(searchgate: rate limit exceeded: this account may make 1 request per second/);
  t.deepEqual(rate.meta, { plan: 'searchgate', rate_limit: 1, rate_current: 1, quota_limit: 100, quota_current: 1, component: 'rate_limiter' });
  t.is(limited.headers.get('retry-after'), '1');
  t.is(limited.headers.get('x-ratelimit-scope'), 'second');
  t.is(limited.headers.get('x-ratelimit-remaining'), '0, 99');
  t.is(limited.headers.get('x-ratelimit-reset'), `1, ${HALF_DAY_SECONDS}`);

  const { key: spent } = await bench.accountKey({ dailyAllowance: 1, ratePerSecond: 10 });
  t.is((await braveGet(bench, { q: 'three' }, token(spent))).status, 200);
  const exhausted = await braveGet(bench, { q: 'four' }, token(spent));
  const quota = await expectBraveError(t, exhausted, 429, 'QUOTA_LIMITED');
  t.regex(quota.detail, /^Request quota limit exceeded for plan\. \(searchgate: daily allowance exhausted: 1 of 1 units used today/);
  t.deepEqual(quota.meta, { plan: 'searchgate', rate_limit: 10, rate_current: 2, quota_limit: 1, quota_current: 1, component: 'rate_limiter' });
  t.is(exhausted.headers.get('retry-after'), String(HALF_DAY_SECONDS));
  t.is(exhausted.headers.get('x-ratelimit-scope'), 'day');
  t.is(exhausted.headers.get('x-ratelimit-limit'), '10, 1');
  t.is(exhausted.headers.get('x-ratelimit-remaining'), '8, 0');
});

test('upstream failures: 502 and 503 UPSTREAM_ERROR, 504 UPSTREAM_TIMEOUT, with the README wording', async (t) => {
  const bench = await dialectBench(t, { timeoutMs: STALL_TIMEOUT_MS });
  bench.upstream.answer(UPSTREAM_FAILURES.failure);
  const failed = await expectBraveError(t, await braveGet(bench, { q: 'fails' }), 502, 'UPSTREAM_ERROR');
  t.deepEqual(failed.meta, {});
  bench.upstream.answer(UPSTREAM_FAILURES.timeout);
  await expectBraveError(t, await braveGet(bench, { q: 'stalls' }), 504, 'UPSTREAM_TIMEOUT');
  // Last: a rate-limited upstream is paused, so every search after it is 503.
  bench.upstream.answer(UPSTREAM_FAILURES.unavailable);
  const unavailable = await braveGet(bench, { q: 'limited' });
  await expectBraveError(t, unavailable, 503, 'UPSTREAM_ERROR');
  t.is(unavailable.headers.get('retry-after'), '30');
});

test('404 and 405 under /brave in Brave\'s shape, naming the route served; the key never leaks', async (t) => {
  const bench = await dialectBench(t);
  const { key } = await bench.accountKey();
  const notFound = await expectBraveError(t, await fetch(`${bench.gateway.url}/brave/res/v1/news/search?q=x`, { headers: token(key) }), 404, 'NOT_FOUND');
  t.regex(notFound.detail, /GET\|POST \/brave\/res\/v1\/web\/search/);
  const wrongMethod = await fetch(`${bench.gateway.url}${PATH}`, { method: 'PUT', headers: token(key) });
  await expectBraveError(t, wrongMethod, 405, 'METHOD_NOT_ALLOWED');
  t.regex(wrongMethod.headers.get('allow') ?? '', /GET/);
  const tooLarge = await postJson(bench.gateway, PATH, { q: 'x'.repeat(2_000_000) }, token(key));
  await expectBraveError(t, tooLarge, 413, 'PAYLOAD_TOO_LARGE');
  await expectBraveError(t, await postJson(bench.gateway, PATH, '{"q": ', token(key)), 422, 'VALIDATION');

  const ok = await braveGet(bench, { q: 'postgres' }, token(key));
  t.false(JSON.stringify([...ok.headers]).includes(key));
  t.false((await leakSurfaces(bench.gateway)).includes(key));
  t.true(bench.gateway.logLines.some((line) => line.includes('"dialect":"brave"') && line.includes('"route":"/brave/res/v1/web/search"')));
});

test('the embedded default: a Brave search answered from the local index', async (t) => {
  const gateway = await embeddedDefaultGateway(t);
  const response = await fetch(`${gateway.url}${PATH}?q=vacuuming&count=5&search_lang=en`, { headers: token(TEST_KEY) });
  t.is(response.status, 200);
  const body = await json(response);
  const urls = body.web.results.map((result: any) => result.url);
  t.true(urls.includes('https://docs.postgres.example/vacuum'), JSON.stringify(urls));
  const vacuum = body.web.results.find((result: any) => result.url === 'https://docs.postgres.example/vacuum');
  t.like(vacuum, { title: 'Routine vacuuming', page_age: '2024-05-05T10:00:00' });
  t.regex(vacuum.description, /vacuum/i);
});
