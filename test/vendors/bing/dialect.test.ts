/**
 * The Bing dialect over real HTTP (../shared/spec/dialects.md §5.5, §6.7, §7.8): GET
 * /bing/v7.0/search against a running gateway with a scripted search upstream, over the embedded
 * local index, and through searchgate's Brave provider and the Brave fake (to see the language
 * reach an upstream). LangChain's BingSearchAPIWrapper runs in test/clients/.
 */
import test, { type ExecutionContext } from 'ava';
import { searchOk } from '../../helpers/faults.js';
import { TEST_KEY } from '../../helpers/gateway.js';
import { dialectBench, embeddedDefaultGateway, json, leakSurfaces, numberedResults, STALL_TIMEOUT_MS, UPSTREAM_FAILURES, UPSTREAM_RESULTS } from '../../helpers/dialect-bench.js';
import { braveBackedGateway } from '../brave/fake.js';

const PATH = '/bing/v7.0/search';
/** 21:29:30 UTC: the daily allowance is replenished in 02:30:30. */
const EVENING = Date.UTC(2026, 10, 23, 21, 29, 30);

const subscription = (key: string) => ({ 'ocp-apim-subscription-key': key });

/** A GET of the search route with these parameters and headers (the operator's key unless told). */
const bingGet = (gateway: { url: string }, params: Record<string, string>, headers: Record<string, string> = subscription(TEST_KEY)) =>
  fetch(`${gateway.url}${PATH}?${new URLSearchParams(params)}`, { headers });

/** API Management's error: the status, exactly {"error": {"code": "<status>", "message"}}, X-Log-Id; returns the message. */
async function expectApimError(t: ExecutionContext, response: Response, status: number): Promise<string> {
  const body = await json(response);
  t.is(response.status, status, JSON.stringify(body));
  t.deepEqual(Object.keys(body), ['error']);
  t.deepEqual(Object.keys(body.error), ['code', 'message']);
  t.is(body.error.code, String(status));
  t.regex(response.headers.get('x-log-id') ?? '', /^[0-9a-f]{32}$/);
  return body.error.message;
}

/** Bing's ErrorResponse with one error: the status, the shape, X-Log-Id; returns the error. */
async function expectBingError(t: ExecutionContext, response: Response, status: number, code: string, subCode?: string) {
  const body = await json(response);
  t.is(response.status, status, JSON.stringify(body));
  t.deepEqual(Object.keys(body), ['_type', 'errors']);
  t.is(body._type, 'ErrorResponse');
  t.is(body.errors.length, 1);
  t.like(body.errors[0], { code, subCode });
  t.regex(response.headers.get('x-log-id') ?? '', /^[0-9a-f]{32}$/);
  return body.errors[0];
}

test("LangChain's request answers in Bing's shape: webPages with every field its clients read", async (t) => {
  const bench = await dialectBench(t);
  const response = await bingGet(bench.gateway, { q: 'postgres vacuum', count: '5', textDecorations: 'True', textFormat: 'HTML' });
  t.is(response.status, 200);
  const body = await json(response);
  t.deepEqual(Object.keys(body), ['_type', 'queryContext', 'webPages']);
  t.is(body._type, 'SearchResponse');
  t.deepEqual(body.queryContext, { originalQuery: 'postgres vacuum' });
  t.like(body.webPages, { webSearchUrl: null, totalEstimatedMatches: 3 });
  t.deepEqual(body.webPages.value, [
    {
      id: `${bench.gateway.url}/bing/v7.0/#WebPages.0`,
      name: 'Routine Vacuuming',
      url: UPSTREAM_RESULTS[0]!.url,
      displayUrl: 'https://www.postgresql.org/docs/current/routine-vacuuming.html',
      snippet: UPSTREAM_RESULTS[0]!.snippet,
      datePublished: '2024-11-14T00:00:00.000Z',
    },
    // An untitled result's name is "", never its address made up as a title (R6); no dates when none is known.
    { id: `${bench.gateway.url}/bing/v7.0/#WebPages.1`, name: '', url: UPSTREAM_RESULTS[1]!.url, displayUrl: 'https://wiki.example.org/vacuum', snippet: UPSTREAM_RESULTS[1]!.snippet },
    {
      id: `${bench.gateway.url}/bing/v7.0/#WebPages.2`,
      name: 'Vacuum cleaners reviewed',
      url: UPSTREAM_RESULTS[2]!.url,
      displayUrl: 'https://shop.example.com/vacuums',
      snippet: UPSTREAM_RESULTS[2]!.snippet,
    },
  ]);
  t.deepEqual(bench.upstream.lastBody(), { query: 'postgres vacuum', count: 5, freshness: 'noLimit' });
  t.is(response.headers.get('x-cache'), 'MISS');
  t.is((await bingGet(bench.gateway, { q: 'postgres vacuum', count: '5', textDecorations: 'True', textFormat: 'HTML' })).headers.get('x-cache'), 'HIT');

  t.is((await bingGet(bench.gateway, { q: 'postgres vacuum' })).status, 200);
  t.is(bench.upstream.lastBody().count, 10, "Bing's default count is 10");
});

test('textFormat=HTML escapes & < > " \' in name and snippet; Raw leaves the text as it is', async (t) => {
  const bench = await dialectBench(t);
  bench.upstream.answer(searchOk([{ name: 'Fish & "Chips" <b>', url: 'https://fish.example/', snippet: "It's 5 > 3 & <i>" }], { totalEstimatedMatches: 1320 }));
  const html = (await json(await bingGet(bench.gateway, { q: 'fish', textFormat: 'html' }))).webPages;
  t.like(html.value[0], { name: 'Fish &amp; &quot;Chips&quot; &lt;b&gt;', snippet: 'It&#39;s 5 &gt; 3 &amp; &lt;i&gt;' });
  t.is(html.totalEstimatedMatches, 1320, "the upstream's estimate");
  t.like((await json(await bingGet(bench.gateway, { q: 'fish', textFormat: 'Raw' }))).webPages.value[0], { name: 'Fish & "Chips" <b>', snippet: "It's 5 > 3 & <i>" });
  const error = await expectBingError(t, await bingGet(bench.gateway, { q: 'fish', textFormat: 'Markdown' }), 400, 'InvalidRequest', 'ParameterInvalidValue');
  t.like(error, { parameter: 'textFormat', value: 'Markdown' });
});

test('count above 50 is served as 50, offset skips results; totalEstimatedMatches counts the offset when the upstream gives none', async (t) => {
  const bench = await dialectBench(t);
  bench.upstream.answer(numberedResults);
  t.is((await json(await bingGet(bench.gateway, { q: 'numbers', count: '80' }))).webPages.value.length, 50);
  const page = (await json(await bingGet(bench.gateway, { q: 'numbers', count: '3', offset: '4' }))).webPages;
  t.deepEqual(page.value.map((result: any) => result.name), ['Result 4', 'Result 5', 'Result 6']);
  t.is(page.value[0].id, `${bench.gateway.url}/bing/v7.0/#WebPages.0`, 'ids number the answer, not the offset');
  t.is(page.totalEstimatedMatches, 7);
  for (const [name, value] of [['count', '0'], ['offset', '-1'], ['count', 'ten']]) {
    const error = await expectBingError(t, await bingGet(bench.gateway, { q: 'numbers', [name!]: value! }), 400, 'InvalidRequest', 'ParameterInvalidValue');
    t.like(error, { parameter: name, value });
    t.regex(error.message, /^Parameter has invalid value\. \(searchgate: /);
  }
});

test('freshness: Day/Week/Month in any case, a day, a range; site: operators; responseFilter', async (t) => {
  const bench = await dialectBench(t);
  const upstreamSees = async (params: Record<string, string>) => {
    const response = await bingGet(bench.gateway, params);
    t.is(response.status, 200, JSON.stringify(await response.clone().json()));
    return bench.upstream.lastBody();
  };
  for (const [freshness, expected] of [['Day', 'oneDay'], ['week', 'oneWeek'], ['MONTH', 'oneMonth'], ['2024-03-01', '2024-03-01'], ['2024-03-01..2024-04-15', '2024-03-01..2024-04-15']]) {
    t.is((await upstreamSees({ q: `fresh ${freshness}`, freshness: freshness! })).freshness, expected, freshness);
  }
  for (const freshness of ['Year', '2024-04-15..2024-03-01', '2024-13-01']) {
    const error = await expectBingError(t, await bingGet(bench.gateway, { q: 'fresh', freshness }), 400, 'InvalidRequest', 'ParameterInvalidValue');
    t.like(error, { parameter: 'freshness', value: freshness });
  }

  t.like(await upstreamSees({ q: 'vacuum site:postgresql.org -site:shop.example.com' }), {
    query: 'vacuum',
    includeDomains: ['postgresql.org'],
    excludeDomains: ['shop.example.com'],
  });

  const answers = async (responseFilter: string) => Object.keys(await json(await bingGet(bench.gateway, { q: 'postgres', responseFilter })));
  t.deepEqual(await answers('News,Videos'), ['_type', 'queryContext']);
  t.deepEqual(await answers('-Webpages'), ['_type', 'queryContext']);
  t.deepEqual(await answers('news, webpages'), ['_type', 'queryContext', 'webPages']);
  t.deepEqual(await answers('-News'), ['_type', 'queryContext', 'webPages']);

  bench.upstream.answer(searchOk([]));
  t.deepEqual(await json(await bingGet(bench.gateway, { q: 'nothing at all' })), { _type: 'SearchResponse', queryContext: { originalQuery: 'nothing at all' } });
});

test('setLang, else mkt, is the language the upstream is asked for', async (t) => {
  const { gateway, lastSearchLanguage } = await braveBackedGateway(t);
  const sentLanguage = async (params: Record<string, string>) => {
    t.is((await bingGet(gateway, { q: 'python', ...params })).status, 200);
    return lastSearchLanguage();
  };
  t.is(await sentLanguage({ mkt: 'de-DE' }), 'de');
  t.is(await sentLanguage({ mkt: 'de-DE', setLang: 'ja' }), 'jp', 'setLang wins');
  t.is(await sentLanguage({}), null);
});

test('the key: Ocp-Apim-Subscription-Key first, then Bearer; §7.8 key rows in API Management\'s shape with a readable reason phrase', async (t) => {
  const bench = await dialectBench(t);
  const account = await bench.accountKey();
  t.is((await bingGet(bench.gateway, { q: 'a' }, subscription(account.key))).status, 200);
  t.is((await bingGet(bench.gateway, { q: 'b' }, { authorization: `Bearer ${account.key}` })).status, 200);
  t.is((await bingGet(bench.gateway, { q: 'c' }, { ...subscription(account.key), authorization: 'Bearer wrong' })).status, 200, 'the header wins');

  const missing = await bingGet(bench.gateway, { q: 'd' }, {});
  const missingMessage = await expectApimError(t, missing, 401);
  t.regex(missingMessage, /^Access denied due to missing subscription key\. .* \(searchgate: no API key: send "Ocp-Apim-Subscription-Key: <API_KEY>"/);
  t.regex(missing.statusText, /^Unauthorized - no API key/);

  const wrong = await expectApimError(t, await bingGet(bench.gateway, { q: 'e' }, subscription('sg_wrong')), 401);
  t.regex(wrong, /^Access denied due to invalid subscription key or wrong API endpoint\. .* \(searchgate: invalid API key\)$/);

  await account.deleteKey();
  const deleted = await bingGet(bench.gateway, { q: 'f' }, subscription(account.key));
  t.regex(await expectApimError(t, deleted, 401), /\(searchgate: API key sg_\w+… has been deleted/);
  t.regex(deleted.statusText, /^Unauthorized - API key sg_\w+ has been deleted; use another key/);

  const disabled = await bench.accountKey();
  await disabled.disableAccount();
  const refused = await bingGet(bench.gateway, { q: 'g' }, subscription(disabled.key));
  t.regex(await expectApimError(t, refused, 403), /^account "client-2" is disabled/);
  t.regex(refused.statusText, /^Forbidden - account "client-2" is disabled/);
  t.is(bench.upstream.requests.length, 3);
});

test('a missing q is 400 ParameterMissing whatever the key, and is not charged', async (t) => {
  const bench = await dialectBench(t);
  const { key } = await bench.accountKey({ dailyAllowance: 5 });
  for (const headers of [subscription('sg_wrong'), subscription(key)]) {
    const response = await bingGet(bench.gateway, { count: '3' }, headers);
    const error = await expectBingError(t, response, 400, 'InvalidRequest', 'ParameterMissing');
    t.deepEqual(error, { code: 'InvalidRequest', subCode: 'ParameterMissing', message: 'Required parameter is missing. (searchgate: q is required)', parameter: 'q' });
    t.regex(response.statusText, /^Bad Request - q is required$/);
  }
  const blank = await expectBingError(t, await bingGet(bench.gateway, { q: '  ' }, subscription(key)), 400, 'InvalidRequest', 'ParameterInvalidValue');
  t.like(blank, { parameter: 'q', value: '  ' });
  const charged = await bingGet(bench.gateway, { q: 'first' }, subscription(key));
  t.is(charged.headers.get('x-ratelimit-remaining'), '4');
  t.is(bench.upstream.requests.length, 1);
});

test('allowance and rate limits: 403 "Out of call volume quota" with the time to 00:00 UTC, 429 "Rate limit is exceeded"', async (t) => {
  const bench = await dialectBench(t);
  bench.clock.now = EVENING;
  const { key } = await bench.accountKey({ dailyAllowance: 1 });
  const first = await bingGet(bench.gateway, { q: 'one' }, subscription(key));
  t.is(first.status, 200);
  t.is(first.headers.get('x-ratelimit-limit'), '1');
  t.is(first.headers.get('x-ratelimit-remaining'), '0');
  t.is(first.headers.get('x-ratelimit-reset'), String(Date.UTC(2026, 10, 24) / 1000));
  const spent = await bingGet(bench.gateway, { q: 'two' }, subscription(key));
  const quota = await expectApimError(t, spent, 403);
  t.regex(quota, /^Out of call volume quota\. Quota will be replenished in 02:30:30\. \(searchgate: daily allowance exhausted: 1 of 1 units used today/);
  t.is(spent.headers.get('retry-after'), '9030');
  t.is(spent.headers.get('x-ratelimit-scope'), 'day');
  t.regex(spent.statusText, /^Forbidden - daily allowance exhausted/);

  const { key: hasty } = await bench.accountKey({ ratePerSecond: 1 });
  t.is((await bingGet(bench.gateway, { q: 'three' }, subscription(hasty))).status, 200);
  const limited = await bingGet(bench.gateway, { q: 'four' }, subscription(hasty));
  t.regex(await expectApimError(t, limited, 429), /^Rate limit is exceeded\. Try again in 1 seconds\. \(searchgate: rate limit exceeded/);
  t.is(limited.headers.get('retry-after'), '1');
  t.is(limited.headers.get('x-ratelimit-scope'), 'second');
});

test('upstream failures: ServerError ResourceError (502, 503), UnexpectedError (504); 404 and 405 in Bing\'s shape; the key never leaks', async (t) => {
  const bench = await dialectBench(t, { timeoutMs: STALL_TIMEOUT_MS });
  const { key } = await bench.accountKey();
  bench.upstream.answer(UPSTREAM_FAILURES.failure);
  const failed = await bingGet(bench.gateway, { q: 'fails' }, subscription(key));
  await expectBingError(t, failed, 502, 'ServerError', 'ResourceError');
  t.is(failed.headers.get('x-ratelimit-limit'), '1000', 'a failure after the charge carries the allowance headers');
  bench.upstream.answer(UPSTREAM_FAILURES.timeout);
  await expectBingError(t, await bingGet(bench.gateway, { q: 'stalls' }, subscription(key)), 504, 'ServerError', 'UnexpectedError');
  // Last: a rate-limited upstream is paused, so every search after it is 503.
  bench.upstream.answer(UPSTREAM_FAILURES.unavailable);
  await expectBingError(t, await bingGet(bench.gateway, { q: 'limited' }, subscription(key)), 503, 'ServerError', 'ResourceError');

  const notFound = await expectBingError(t, await fetch(`${bench.gateway.url}/bing/v7.0/news/search?q=x`, { headers: subscription(key) }), 404, 'InvalidRequest');
  t.regex(notFound.message, /searchgate serves GET \/bing\/v7\.0\/search here/);
  const wrongMethod = await fetch(`${bench.gateway.url}${PATH}`, { method: 'POST', headers: { ...subscription(key), 'content-type': 'application/json' }, body: '{"q": "x"}' });
  await expectBingError(t, wrongMethod, 405, 'InvalidRequest');
  t.regex(wrongMethod.headers.get('allow') ?? '', /\bGET\b/);

  t.false((await leakSurfaces(bench.gateway)).includes(key));
  t.true(bench.gateway.logLines.some((line) => line.includes('"dialect":"bing"') && line.includes('"route":"/bing/v7.0/search"')));
});

test('the embedded default: a Bing search answered from the local index', async (t) => {
  const gateway = await embeddedDefaultGateway(t);
  const response = await bingGet(gateway, { q: 'vacuuming', count: '5', mkt: 'en-US' });
  t.is(response.status, 200);
  const { webPages } = await json(response);
  const vacuum = webPages.value.find((result: any) => result.url === 'https://docs.postgres.example/vacuum');
  t.like(vacuum, { name: 'Routine vacuuming', datePublished: '2024-05-05T10:00:00.000Z', dateLastCrawled: '2026-11-01T00:00:00.000Z' });
  t.regex(vacuum.snippet, /vacuum/i);
  t.is(webPages.totalEstimatedMatches >= webPages.value.length, true);
});
