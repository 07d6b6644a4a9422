/**
 * The Tavily dialect over real HTTP (../shared/spec/dialects.md §5.1, §6.6, §7.4): POST
 * /tavily/search and /tavily/extract against a running gateway with a scripted search upstream and
 * a loopback site for page text, over the embedded local index, through searchgate's own tavily
 * provider and through @tavily/core. The Python clients (tavily-python, LangChain, litellm) run in
 * test/clients/python-clients.test.ts.
 */
import test, { type ExecutionContext } from 'ava';
import { tavily } from '@tavily/core';
import type { PageFailure } from '../../../src/providers/types.js';
import { failedResultError, pageFailureOf } from '../../../src/vendors/tavily/wire.js';
import { searchOk } from '../../helpers/faults.js';
import { startGateway, TEST_KEY } from '../../helpers/gateway.js';
import {
  ARTICLE_SENTENCES,
  ARTICLE_TITLE,
  bearer,
  dialectBench,
  embeddedDefaultGateway,
  INDEXED_PAGE,
  json,
  leakSurfaces,
  postJson,
  STALL_TIMEOUT_MS,
  UPSTREAM_FAILURES,
  UPSTREAM_RESULTS,
  utcDay,
} from '../../helpers/dialect-bench.js';
const UNAUTHORIZED = 'Unauthorized: missing or invalid API key.';

/** A Tavily error: the status, exactly {"detail": {"error": M}} (never a top-level `error`), X-Log-Id; returns M. */
async function expectTavilyError(t: ExecutionContext, response: Response, status: number): Promise<string> {
  const body = await json(response);
  t.is(response.status, status, JSON.stringify(body));
  t.deepEqual(Object.keys(body), ['detail']);
  t.deepEqual(Object.keys(body.detail), ['error']);
  t.is(typeof body.detail.error, 'string');
  t.regex(response.headers.get('x-log-id') ?? '', /^[0-9a-f]{32}$/);
  return body.detail.error;
}

test('search answers in Tavily\'s shape: every field its clients read, from the gateway\'s answer', async (t) => {
  const bench = await dialectBench(t);
  const response = await bench.gateway.post('/tavily/search', { query: 'postgres vacuum' });
  t.is(response.status, 200);
  const body = await json(response);
  t.deepEqual(Object.keys(body), ['query', 'follow_up_questions', 'answer', 'images', 'results', 'response_time', 'request_id']);
  t.like(body, { query: 'postgres vacuum', follow_up_questions: null, answer: null, images: [] });
  t.deepEqual(body.results, [
    {
      title: 'Routine Vacuuming',
      url: UPSTREAM_RESULTS[0]!.url,
      content: UPSTREAM_RESULTS[0]!.snippet,
      score: 1,
      raw_content: null,
      published_date: '2024-11-14T00:00:00.000Z',
    },
    // An untitled result has an empty title, never its address made up as one (R6).
    { title: '', url: UPSTREAM_RESULTS[1]!.url, content: UPSTREAM_RESULTS[1]!.snippet, score: 2 / 3, raw_content: null },
    { title: 'Vacuum cleaners reviewed', url: UPSTREAM_RESULTS[2]!.url, content: UPSTREAM_RESULTS[2]!.snippet, score: 1 / 3, raw_content: null },
  ]);
  t.is(typeof body.response_time, 'number');
  t.is(body.request_id, response.headers.get('x-log-id'));
  t.is(response.headers.get('x-cache'), 'MISS');
  t.deepEqual(bench.upstream.lastBody(), { query: 'postgres vacuum', count: 5, freshness: 'noLimit' });

  const again = await bench.gateway.post('/tavily/search', { query: 'postgres vacuum' });
  t.is(again.headers.get('x-cache'), 'HIT');
  t.is(bench.upstream.requests.length, 1);
});

test('search request fields map onto searchgate\'s search: count, domains, dates, text, nulls, ignored fields', async (t) => {
  const bench = await dialectBench(t, { config: { dialects: { tavily: { rawContentMaxCharacters: 1234 } } } });
  const upstreamSees = async (body: Record<string, unknown>) => {
    const response = await bench.gateway.post('/tavily/search', body);
    t.is(response.status, 200, JSON.stringify(await response.clone().json()));
    return bench.upstream.lastBody();
  };
  const today = utcDay(bench.clock.now);

  t.like(
    await upstreamSees({ query: 'a', max_results: 25, include_domains: ['https://www.PostgreSQL.org/docs'], exclude_domains: ['shop.example.com'] }),
    { count: 20, includeDomains: ['postgresql.org'], excludeDomains: ['shop.example.com'] },
    'above 20 is served as 20; domains are normalized',
  );
  t.like(await upstreamSees({ query: 'b', time_range: 'w' }), { freshness: 'oneWeek' });
  t.like(await upstreamSees({ query: 'b', time_range: 'year' }), { freshness: 'oneYear' });
  t.like(await upstreamSees({ query: 'c', time_range: 'd', start_date: '2024-01-01', end_date: '2024-06-30' }), { freshness: '2024-01-01..2024-06-30' }, 'dates win');
  t.like(await upstreamSees({ query: 'c', start_date: '2024-01-01' }), { freshness: `2024-01-01..${today}` });
  t.like(await upstreamSees({ query: 'd', topic: 'news', days: 3 }), { freshness: `${utcDay(bench.clock.now - 3 * 86_400_000)}..${today}` });
  t.like(await upstreamSees({ query: 'd', topic: 'general', days: 7 }), { freshness: 'noLimit' }, 'days only for news');
  for (const include_raw_content of [true, 'markdown', 'text']) {
    t.like(await upstreamSees({ query: `e ${include_raw_content}`, include_raw_content }), { contents: { text: { max_characters: 1234 } } });
  }
  t.false('contents' in (await upstreamSees({ query: 'f', include_raw_content: false })));
  // R5: null is "not given"; unknown and ignored fields are accepted.
  t.deepEqual(
    await upstreamSees({ query: 'g', max_results: null, topic: null, time_range: null, include_domains: null, include_raw_content: null, days: null }),
    { query: 'g', count: 5, freshness: 'noLimit' },
  );
  t.deepEqual(
    await upstreamSees({ query: 'h', search_depth: 'advanced', chunks_per_source: 3, country: 'germany', auto_parameters: true, include_answer: 'advanced', include_images: true, unknown: 1 }),
    { query: 'h', count: 5, freshness: 'noLimit' },
  );
});

test('include_raw_content: each result\'s page text from the content chain, cut at the configured cap; a page without text is null', async (t) => {
  const bench = await dialectBench(t, { config: { dialects: { tavily: { rawContentMaxCharacters: 90 } } } });
  bench.upstream.answer(searchOk([
    { name: 'Autovacuum', url: bench.pages.article, snippet: 'about autovacuum' },
    { name: 'Gone', url: bench.pages.missing, snippet: 'a page that is gone' },
  ]));
  const body = await json(await bench.gateway.post('/tavily/search', { query: 'autovacuum', include_raw_content: 'text' }));
  const [article, missing] = body.results;
  t.is(article.url, bench.pages.article);
  t.true(ARTICLE_SENTENCES.join(' ').startsWith(article.raw_content.slice(0, 60)), article.raw_content);
  t.true([...article.raw_content].length <= 90);
  t.true(article.content.length > 0, 'content is never empty when there is text');
  t.is(missing.raw_content, null);
  t.is(typeof missing.content, 'string');
});

test('include_favicon and include_usage: favicon null on each result; usage.credits the units charged (0 for an operator key)', async (t) => {
  const bench = await dialectBench(t, { config: { accounts: { weights: { webSearch: 2 } } } });
  const client = await bench.accountKey({ dailyAllowance: 10 });
  const response = await bench.gateway.post('/tavily/search', { query: 'q', include_favicon: true, include_usage: true }, bearer(client.key));
  const body = await json(response);
  t.deepEqual(body.usage, { credits: 2 });
  t.true(body.results.every((result: any) => 'favicon' in result && result.favicon === null));
  t.is(response.headers.get('x-ratelimit-limit'), '10');
  t.is(response.headers.get('x-ratelimit-remaining'), '8');
  t.regex(response.headers.get('x-ratelimit-reset') ?? '', /^\d+$/);
  const operator = await json(await bench.gateway.post('/tavily/search', { query: 'r', include_usage: true }));
  t.deepEqual(operator.usage, { credits: 0 });
  t.false('usage' in (await json(await bench.gateway.post('/tavily/search', { query: 's' }))));
});

test('max_results 0 answers no results', async (t) => {
  const bench = await dialectBench(t);
  const response = await bench.gateway.post('/tavily/search', { query: 'nothing wanted', max_results: 0 });
  t.is(response.status, 200);
  t.deepEqual((await json(response)).results, []);
});

test('max_results 0 makes no upstream call', async (t) => {
  const bench = await dialectBench(t);
  await bench.gateway.post('/tavily/search', { query: 'nothing wanted', max_results: 0 });
  t.is(bench.upstream.requests.length, 0);
});

test('the key: Bearer first, then the body api_key (LangChain\'s wrapper), which is never logged, measured or echoed', async (t) => {
  const bench = await dialectBench(t);
  const client = await bench.accountKey({ dailyAllowance: 5 });
  const inBody = await postJson(bench.gateway, '/tavily/search', { api_key: client.key, query: 'body key' });
  const text = await inBody.text();
  t.is(inBody.status, 200, text);
  t.is(inBody.headers.get('x-ratelimit-remaining'), '4', 'charged to the body key\'s account');
  const everywhere = `${text}\n${JSON.stringify([...inBody.headers])}\n${await leakSurfaces(bench.gateway)}\n${JSON.stringify(bench.upstream.requests)}`;
  t.false(everywhere.includes(client.key.slice(16)), 'the key never leaves the request');

  t.is((await postJson(bench.gateway, '/tavily/search', { api_key: 'sk-not-a-key-000', query: 'both' }, bearer(client.key))).status, 200, 'Bearer wins');
  const wrongBearer = await postJson(bench.gateway, '/tavily/search', { api_key: client.key, query: 'both' }, bearer('sk-not-a-key-000'));
  t.is(await expectTavilyError(t, wrongBearer, 401), `${UNAUTHORIZED} (searchgate: invalid API key)`);
  // tavily-python and @tavily/core without a key: keyless mode is a missing key.
  const keyless = await postJson(bench.gateway, '/tavily/search', { query: 'keyless' }, { 'x-tavily-access-mode': 'keyless', 'x-client-source': 'tavily-python-keyless' });
  t.is(await expectTavilyError(t, keyless, 401), `${UNAUTHORIZED} (searchgate: no API key: send Authorization: Bearer <key> or api_key)`);
  t.true(keyless.statusText.startsWith('Unauthorized - no API key'), keyless.statusText);
  t.true(keyless.statusText.length <= 80);
});

test('§7.4: keys, accounts, invalid requests and allowances answer Tavily\'s statuses and sentences; refusals are not charged', async (t) => {
  const bench = await dialectBench(t);
  const search = (headers: Record<string, string>, body: unknown = { query: 'q' }) => postJson(bench.gateway, '/tavily/search', body, headers);

  t.is(await expectTavilyError(t, await search(bearer('sk-not-a-key-000')), 401), `${UNAUTHORIZED} (searchgate: invalid API key)`);
  const deletedReply = await search(bearer(bench.keys.deleted));
  t.regex(await expectTavilyError(t, deletedReply, 401), /^Unauthorized: missing or invalid API key\. \(searchgate: API key sg_\w+… has been deleted/);
  t.regex(deletedReply.statusText, /^Unauthorized - API key sg_[0-9a-f]+ has been deleted/);
  const disabled = await bench.accountKey();
  await disabled.disableAccount();
  t.regex(await expectTavilyError(t, await search(bearer(disabled.key)), 403), /account "client-\d+" is disabled/);

  const client = await bench.accountKey({ dailyAllowance: 1 });
  for (const [body, message] of [
    [{}, /query is required/],
    [{ query: '  ' }, /query must not be empty or blank/],
    [{ query: 'q', max_results: -1 }, /max_results/],
    [{ query: 'q', time_range: 'fortnight' }, /time_range/],
    [{ query: 'q', start_date: '2024-13-01' }, /start_date: 2024-13-01 is not a valid date/],
    [{ query: 'q', start_date: '2024-06-01', end_date: '2024-01-01' }, /after its end/],
    [{ query: 'q', include_domains: 'postgresql.org' }, /include_domains must be array/],
    ['[1, 2]', /JSON object/],
    ['{"query": ', /not a valid JSON object/],
  ] as const) {
    t.regex(await expectTavilyError(t, await search(bearer(client.key), body), 400), message, JSON.stringify(body));
  }
  for (const [body, message] of [
    [{}, /urls is required/],
    [{ urls: [] }, /urls/],
    [{ urls: Array.from({ length: 21 }, (_, i) => `https://example.org/${i}`) }, /urls/],
    [{ urls: ['https://example.org'], timeout: 0 }, /timeout/],
  ] as const) {
    t.regex(await expectTavilyError(t, await postJson(bench.gateway, '/tavily/extract', body, bearer(client.key)), 400), message, JSON.stringify(body));
  }
  t.is(bench.upstream.requests.length, 0, 'nothing invalid reached the upstream');

  const first = await search(bearer(client.key));
  t.is(first.status, 200, 'the refusals above cost nothing');
  t.is(first.headers.get('x-ratelimit-remaining'), '0');
  const spent = await search(bearer(client.key));
  t.regex(await expectTavilyError(t, spent, 432), /^This request exceeds your plan's set usage limit\. \(searchgate: daily allowance exhausted: 1 of 1 units used today/);
  t.is(spent.headers.get('x-ratelimit-scope'), 'day');
  t.regex(spent.headers.get('retry-after') ?? '', /^\d+$/);

  const limited = await bench.accountKey({ ratePerMinute: 1 });
  t.is((await search(bearer(limited.key))).status, 200);
  const refused = await search(bearer(limited.key));
  t.regex(await expectTavilyError(t, refused, 429), /^Your request has been blocked due to excessive requests\. \(searchgate: rate limit exceeded/);
  t.is(refused.headers.get('x-ratelimit-scope'), 'minute');
  t.regex(refused.headers.get('retry-after') ?? '', /^\d+$/);
});

test('§7.4: upstream failures are 502, 503 (with Retry-After) and 504, and are refunded', async (t) => {
  const bench = await dialectBench(t, { timeoutMs: STALL_TIMEOUT_MS });
  const client = await bench.accountKey({ dailyAllowance: 10 });
  const search = (query: string) => bench.gateway.post('/tavily/search', { query }, bearer(client.key));
  bench.upstream.answer(UPSTREAM_FAILURES.failure);
  t.regex(await expectTavilyError(t, await search('fails'), 502), /up/);
  bench.upstream.answer(UPSTREAM_FAILURES.timeout);
  t.regex(await expectTavilyError(t, await search('stalls'), 504), /timed out/);
  // Last: a rate-limited upstream is paused for its Retry-After.
  bench.upstream.answer(UPSTREAM_FAILURES.unavailable);
  const unavailable = await search('rate limited upstream');
  t.regex(await expectTavilyError(t, unavailable, 503), /rate/);
  t.is(unavailable.headers.get('retry-after'), '30');
  const extract = await bench.gateway.post('/tavily/extract', { urls: [bench.pages.article] }, bearer(client.key));
  t.is(extract.headers.get('x-ratelimit-remaining'), '9', 'the three failures were refunded');
});

test('under /tavily, an unknown path (404, naming the served routes), a wrong method (405 with Allow), a body too large (413) or not JSON (415) answer in Tavily\'s shape', async (t) => {
  const bench = await dialectBench(t, { config: { server: { maxBodyBytes: 1024 } } });
  const crawl = await bench.gateway.post('/tavily/crawl', { url: 'https://example.org' });
  t.is(await expectTavilyError(t, crawl, 404), 'no route for POST /tavily/crawl; searchgate serves POST /tavily/search, POST /tavily/extract here');
  const get = await fetch(`${bench.gateway.url}/tavily/search?query=q`, { headers: bearer(TEST_KEY) });
  t.regex(await expectTavilyError(t, get, 405), /method GET is not allowed/);
  t.is(get.headers.get('allow'), 'POST');
  const form = await fetch(`${bench.gateway.url}/tavily/search`, { method: 'POST', headers: { ...bearer(TEST_KEY), 'content-type': 'text/plain' }, body: 'q' });
  t.regex(await expectTavilyError(t, form, 415), /Content-Type must be application\/json/);
  t.regex(await expectTavilyError(t, await bench.gateway.post('/tavily/search', { query: 'x'.repeat(2000) }), 413), /too large/);
});

test('extract: the text of each page and, in failed_results, why a page has none; charged accounts.weights.content once per request', async (t) => {
  const bench = await dialectBench(t, { config: { accounts: { weights: { content: 2 } } } });
  const client = await bench.accountKey({ dailyAllowance: 10 });
  const urls = [bench.pages.article, bench.pages.missing, bench.pages.refused, 'ftp://example.org/file'];
  const response = await bench.gateway.post('/tavily/extract', { urls, include_usage: true, include_favicon: true, format: 'markdown', extract_depth: 'advanced' }, bearer(client.key));
  t.is(response.status, 200);
  const body = await json(response);
  t.deepEqual(Object.keys(body), ['results', 'failed_results', 'response_time', 'request_id', 'usage']);
  t.is(body.results.length, 1);
  const [page] = body.results;
  t.like(page, { url: bench.pages.article, title: ARTICLE_TITLE, images: [], favicon: null });
  for (const sentence of ARTICLE_SENTENCES) t.true(page.raw_content.includes(sentence), sentence);
  t.false(page.raw_content.includes('Copyright'), 'boilerplate removed');
  t.deepEqual(body.failed_results, [
    { url: bench.pages.missing, error: 'Page not found: the page answered HTTP 404' },
    { url: bench.pages.refused, error: 'Failed to fetch the page' },
    { url: 'ftp://example.org/file', error: 'Failed to fetch the page' },
  ]);
  t.deepEqual(body.usage, { credits: 2 });
  t.is(body.request_id, response.headers.get('x-log-id'));
  t.is(response.headers.get('x-ratelimit-remaining'), '8', 'four URLs, one charge');
  t.is(response.headers.get('x-cache'), 'MISS');

  // One URL as a string; a page fetched before comes from the cache.
  const single = await bench.gateway.post('/tavily/extract', { urls: bench.pages.article }, bearer(client.key));
  const singleBody = await json(single);
  t.is(single.headers.get('x-cache'), 'HIT');
  t.is(singleBody.results[0].raw_content, page.raw_content);
  t.deepEqual(singleBody.failed_results, []);
  t.false('usage' in singleBody);
  t.false('favicon' in singleBody.results[0]);
  t.is(bench.site.requests.filter((request) => request.url === '/article').length, 1);
});

test('extract: timeout (seconds) bounds the wait; a page not fetched by then failed with a timeout', async (t) => {
  const bench = await dialectBench(t);
  const body = await json(await bench.gateway.post('/tavily/extract', { urls: [bench.pages.slow], timeout: 0.3 }));
  t.deepEqual(body, { results: [], failed_results: [{ url: bench.pages.slow, error: 'Timed out fetching the page' }], response_time: body.response_time, request_id: body.request_id });
});

test('extract: an address the content fetcher refuses is reported blocked', async (t) => {
  const bench = await dialectBench(t, { local: { allowPrivateNetworks: false } });
  const body = await json(await bench.gateway.post('/tavily/extract', { urls: [bench.pages.article] }));
  t.deepEqual(body.failed_results, [{ url: bench.pages.article, error: 'Blocked: the address is not allowed' }]);
  t.is(bench.site.requests.length, 0);
});

test('over the embedded default: search and extract answer from the local index', async (t) => {
  const gateway = await embeddedDefaultGateway(t);
  const { url, text } = INDEXED_PAGE;
  const search = await json(await gateway.post('/tavily/search', { query: 'vacuuming', include_raw_content: true }));
  t.is(search.results.length, 1);
  t.like(search.results[0], { title: 'Routine vacuuming', url, score: 1, raw_content: text, published_date: '2024-05-05T10:00:00.000Z' });
  const extract = await json(await gateway.post('/tavily/extract', { urls: [url] }));
  t.like(extract.results[0], { url, title: 'Routine vacuuming', raw_content: text });
});

test('failed_results words: what the dialect writes, the provider reads back; Tavily\'s own wording read as well as it can be', (t) => {
  const failures: PageFailure[] = [{ failure: 'not_found', httpStatus: 410 }, { failure: 'not_found' }, { failure: 'timeout' }, { failure: 'blocked' }, { failure: 'error' }];
  for (const failure of failures) t.deepEqual(pageFailureOf(failedResultError(failure)), failure);
  t.deepEqual(pageFailureOf('Failed to fetch url'), { failure: 'error' });
  t.deepEqual(pageFailureOf('Request timed out'), { failure: 'timeout' });
  t.deepEqual(pageFailureOf('URL is blocked by robots.txt'), { failure: 'blocked' });
  t.deepEqual(pageFailureOf('404 Not Found'), { failure: 'not_found' });
  t.is(pageFailureOf(''), null, 'no words: Tavily did not say why');
  t.is(pageFailureOf(undefined), null);
});

test('searchgate\'s own tavily provider, pointed at this dialect, searches and extracts through it (both directions share wire.ts)', async (t) => {
  const bench = await dialectBench(t);
  const front = await startGateway({
    providers: { 'tavily-up': { type: 'tavily', baseUrl: `${bench.gateway.url}/tavily`, apiKey: TEST_KEY } },
    search: { chain: ['tavily-up'] },
    content: { chain: ['tavily-up'] },
  });
  t.teardown(() => front.close());

  const search = await json(await front.post('/v1/web-search', { query: 'postgres vacuum', count: 2, includeDomains: ['postgresql.org'] }));
  t.like(search.data.webPages.value, [{ name: 'Routine Vacuuming', url: UPSTREAM_RESULTS[0]!.url, snippet: UPSTREAM_RESULTS[0]!.snippet }]);
  t.like(bench.upstream.lastBody(), { query: 'postgres vacuum', count: 2, includeDomains: ['postgresql.org'] });

  const extract = await json(await front.post('/tavily/extract', { urls: [bench.pages.article, bench.pages.missing] }));
  t.true(extract.results[0].raw_content.includes(ARTICLE_SENTENCES[0]!));
  t.deepEqual(extract.failed_results, [{ url: bench.pages.missing, error: 'Page not found: the page answered HTTP 404' }], 'the page\'s failure read back from failed_results');
});

test('@tavily/core: search, extract, and an Error with Tavily\'s message for a deleted key, a spent allowance and keyless mode', async (t) => {
  const bench = await dialectBench(t);
  const client = await bench.accountKey({ dailyAllowance: 3 });
  const apiBaseURL = `${bench.gateway.url}/tavily`;
  const sdk = tavily({ apiKey: client.key, apiBaseURL });

  const found = await sdk.search('postgres vacuum', { maxResults: 3 });
  t.is(found.results.length, 3);
  t.like(found.results[0], { title: 'Routine Vacuuming', url: UPSTREAM_RESULTS[0]!.url, score: 1, publishedDate: '2024-11-14T00:00:00.000Z' });
  t.deepEqual(found.images, []);
  t.regex(found.requestId, /^[0-9a-f]{32}$/);

  const extracted = await sdk.extract([bench.pages.article, bench.pages.missing]);
  t.true(extracted.results[0]!.rawContent.includes(ARTICLE_SENTENCES[0]!));
  t.deepEqual(extracted.failedResults, [{ url: bench.pages.missing, error: 'Page not found: the page answered HTTP 404' }]);

  await sdk.search('spends the last unit');
  await t.throwsAsync(sdk.search('one too many'), { instanceOf: Error, message: /^This request exceeds your plan's set usage limit\. \(searchgate: daily allowance exhausted/ });
  await t.throwsAsync(tavily({ apiKey: bench.keys.deleted, apiBaseURL }).search('q'), { instanceOf: Error, message: /^Unauthorized: missing or invalid API key\. \(searchgate: API key .+ has been deleted/ });
  const saved = process.env.TAVILY_API_KEY;
  delete process.env.TAVILY_API_KEY;
  try {
    const keyless = await t.throwsAsync(tavily({ apiBaseURL }).search('q'), { message: `${UNAUTHORIZED} (searchgate: no API key: send Authorization: Bearer <key> or api_key)` });
    t.is(keyless?.constructor, Error, 'a plain Error, not TavilyKeylessLimitError');
  } finally {
    if (saved !== undefined) process.env.TAVILY_API_KEY = saved;
  }
});
