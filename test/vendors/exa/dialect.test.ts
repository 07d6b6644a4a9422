/**
 * The Exa dialect over real HTTP (../shared/spec/dialects.md §5.2, §6.11, §7.5): POST /exa/search
 * and /exa/contents against a running gateway with a scripted search upstream and a loopback site
 * for page text, over the embedded local index, through searchgate's own exa provider and through
 * exa-js. The Python clients (exa-py, litellm) run in test/clients/python-clients.test.ts.
 */
import test, { type ExecutionContext } from 'ava';
import { Exa, ExaError } from 'exa-js';
import type { PageFailure } from '../../../src/providers/types.js';
import { crawlError, pageFailureOf } from '../../../src/vendors/exa/wire.js';
import { searchOk } from '../../helpers/faults.js';
import { startGateway, TEST_KEY } from '../../helpers/gateway.js';
import {
  ARTICLE_SENTENCES,
  ARTICLE_TITLE,
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

const apiKey = (key: string) => ({ 'x-api-key': key });

/** The upstream's results with page text of their own, so that text mode needs no fetch. */
const WITH_TEXT = UPSTREAM_RESULTS.map((result) => ({ ...result, text: `${result.snippet} The rest of the page, about vacuum.` }));
const PUBLISHED = '2024-11-14T00:00:00.000Z';

/** An Exa error: the status, exactly {requestId: X-Log-Id, error, tag}; returns it. */
async function expectExaError(t: ExecutionContext, response: Response, status: number, tag: string): Promise<string> {
  const body = await json(response);
  t.is(response.status, status, JSON.stringify(body));
  t.deepEqual(Object.keys(body), ['requestId', 'error', 'tag']);
  t.is(body.requestId, response.headers.get('x-log-id'));
  t.is(body.tag, tag);
  t.is(typeof body.error, 'string');
  return body.error;
}

test('search answers in Exa\'s shape: id, url, title ("" when unknown), publishedDate (or null), author null, requestId', async (t) => {
  const bench = await dialectBench(t);
  const response = await bench.gateway.post('/exa/search', { query: 'postgres vacuum', numResults: 3 }, apiKey(TEST_KEY));
  t.is(response.status, 200);
  const body = await json(response);
  t.deepEqual(body, {
    requestId: response.headers.get('x-log-id'),
    results: [
      { id: UPSTREAM_RESULTS[0]!.url, url: UPSTREAM_RESULTS[0]!.url, title: 'Routine Vacuuming', publishedDate: PUBLISHED, author: null },
      { id: UPSTREAM_RESULTS[1]!.url, url: UPSTREAM_RESULTS[1]!.url, title: '', publishedDate: null, author: null },
      { id: UPSTREAM_RESULTS[2]!.url, url: UPSTREAM_RESULTS[2]!.url, title: 'Vacuum cleaners reviewed', publishedDate: null, author: null },
    ],
  });
  t.deepEqual(bench.upstream.lastBody(), { query: 'postgres vacuum', count: 3, freshness: 'noLimit' });
  t.is(response.headers.get('x-cache'), 'MISS');
  t.is((await bench.gateway.post('/exa/search', { query: 'postgres vacuum', numResults: 3 }, apiKey(TEST_KEY))).headers.get('x-cache'), 'HIT');
});

test('search request fields map onto searchgate\'s search: numResults, domains, published dates, contents (new and legacy shapes), nulls', async (t) => {
  const bench = await dialectBench(t);
  bench.upstream.answer(searchOk(WITH_TEXT));
  const upstreamSees = async (body: Record<string, unknown>) => {
    const response = await bench.gateway.post('/exa/search', body, apiKey(TEST_KEY));
    t.is(response.status, 200, JSON.stringify(await response.clone().json()));
    return bench.upstream.lastBody();
  };
  const today = utcDay(bench.clock.now);

  t.like(await upstreamSees({ query: 'a' }), { count: 10 });
  t.like(await upstreamSees({ query: 'a', numResults: 70 }), { count: 50 }, '51–100 served as 50');
  t.like(await upstreamSees({ query: 'b', includeDomains: ['https://www.PostgreSQL.org/'], excludeDomains: ['shop.example.com'] }), {
    includeDomains: ['postgresql.org'],
    excludeDomains: ['shop.example.com'],
  });
  t.like(await upstreamSees({ query: 'c', startPublishedDate: '2024-01-01T10:00:00.000Z', endPublishedDate: '2024-03-31T23:59:59.999Z' }), { freshness: '2024-01-01..2024-03-31' });
  t.like(await upstreamSees({ query: 'c', startPublishedDate: '2024-01-01' }), { freshness: `2024-01-01..${today}` });
  t.like(await upstreamSees({ query: 'c', endPublishedDate: '2001-02-03' }), { freshness: '1970-01-01..2001-02-03' });
  t.like(await upstreamSees({ query: 'd', contents: { text: { maxCharacters: 200, includeHtmlTags: true } } }), { contents: { text: { max_characters: 200 } } });
  t.like(await upstreamSees({ query: 'd', contents: { text: true } }), { contents: { text: { max_characters: 10_000 } } });
  t.like(await upstreamSees({ query: 'e', text: true }), { contents: { text: { max_characters: 10_000 } } }, 'the legacy top-level shape');
  t.like(await upstreamSees({ query: 'e', text: true, contents: { text: { maxCharacters: 99 } } }), { contents: { text: { max_characters: 99 } } }, 'contents wins');
  t.like(await upstreamSees({ query: 'f', contents: { summary: true } }), { summary: true });
  const highlightsOnly = await upstreamSees({ query: 'g', contents: { highlights: { numSentences: 2 } } });
  t.false('contents' in highlightsOnly, 'highlights are snippets: no page text needed');
  t.deepEqual(
    await upstreamSees({ query: 'h', numResults: null, includeDomains: null, startPublishedDate: null, contents: null, type: 'neural', category: 'news', userLocation: 'US', livecrawl: 'always', unknown: 1 }),
    { query: 'h', count: 10, freshness: 'noLimit' },
    'R5 nulls; ignored fields accepted',
  );
});

test('search contents: text cut at maxCharacters, highlights one passage, summary extractive; includeText/excludeText filter case-insensitively', async (t) => {
  const bench = await dialectBench(t);
  bench.upstream.answer(searchOk(WITH_TEXT));
  const body = await json(
    await bench.gateway.post(
      '/exa/search',
      { query: 'vacuum', contents: { text: { maxCharacters: 30 }, highlights: true, summary: true }, includeText: ['VACUUM'], excludeText: ['cleaners'] },
      apiKey(TEST_KEY),
    ),
  );
  t.deepEqual(body.results.map((result: any) => result.url), [UPSTREAM_RESULTS[0]!.url, UPSTREAM_RESULTS[1]!.url], 'the cleaners review is excluded');
  const [first] = body.results;
  t.is(first.text, [...WITH_TEXT[0]!.text].slice(0, 30).join(''));
  t.is(first.highlights.length, 1);
  t.true(WITH_TEXT[0]!.text.startsWith(first.highlights[0]));
  t.true(WITH_TEXT[0]!.text.startsWith(first.summary.slice(0, 20)));

  const filtered = await json(await bench.gateway.post('/exa/search', { query: 'vacuum', includeText: ['autovacuum tuning'] }, apiKey(TEST_KEY)));
  t.deepEqual(filtered.results.map((result: any) => result.url), [UPSTREAM_RESULTS[1]!.url], 'matched in the snippet');
  const snippets = await json(await bench.gateway.post('/exa/search', { query: 'vacuum', contents: { highlights: true } }, apiKey(TEST_KEY)));
  t.deepEqual(snippets.results[0].highlights, [UPSTREAM_RESULTS[0]!.snippet]);
  t.false('text' in snippets.results[0]);
});

test('the key: x-api-key first, then Bearer; never logged or measured', async (t) => {
  const bench = await dialectBench(t);
  const client = await bench.accountKey({ dailyAllowance: 5 });
  const search = (headers: Record<string, string>) => postJson(bench.gateway, '/exa/search', { query: 'q' }, headers);
  const viaHeader = await search(apiKey(client.key));
  t.is(viaHeader.status, 200);
  t.is(viaHeader.headers.get('x-ratelimit-remaining'), '4');
  t.is((await search({ authorization: `Bearer ${client.key}` })).status, 200);
  t.is((await search({ ...apiKey(client.key), authorization: 'Bearer sk-not-a-key-000' })).status, 200, 'x-api-key wins');
  t.is(await expectExaError(t, await search({ ...apiKey('sk-not-a-key-000'), authorization: `Bearer ${client.key}` }), 401, 'INVALID_API_KEY'), 'Invalid API key (searchgate: invalid API key)');
  t.false((await leakSurfaces(bench.gateway)).includes(client.key.slice(16)));
});

test('§7.5: keys, accounts, invalid requests and allowances answer Exa\'s statuses, messages and tags; refusals are not charged', async (t) => {
  const bench = await dialectBench(t);
  const search = (headers: Record<string, string>, body: unknown = { query: 'q' }) => postJson(bench.gateway, '/exa/search', body, headers);

  const missing = await search({});
  t.is(await expectExaError(t, missing, 401, 'INVALID_API_KEY'), 'Missing API key (searchgate: no API key: send the x-api-key header)');
  t.true(missing.statusText.startsWith('Unauthorized - no API key'), missing.statusText);
  t.regex(await expectExaError(t, await search(apiKey(bench.keys.deleted)), 401, 'INVALID_API_KEY'), /^Invalid API key \(searchgate: API key sg_\w+… has been deleted/);
  const disabled = await bench.accountKey();
  await disabled.disableAccount();
  t.regex(await expectExaError(t, await search(apiKey(disabled.key)), 403, 'ACCESS_DENIED'), /account "client-\d+" is disabled/);

  const client = await bench.accountKey({ dailyAllowance: 1 });
  for (const [body, message] of [
    [{}, /query is required/],
    [{ query: 'q', numResults: 101 }, /numResults/],
    [{ query: 'q', numResults: 0 }, /numResults/],
    [{ query: 'q', startPublishedDate: 'last tuesday' }, /startPublishedDate: last tuesday is not a valid date/],
    [{ query: 'q', startPublishedDate: '2024-06-01', endPublishedDate: '2024-01-01' }, /after its end/],
    [{ query: 'q', contents: { text: { maxCharacters: 0 } } }, /maxCharacters/],
    [{ query: 'q', includeText: 'vacuum' }, /includeText must be array/],
  ] as const) {
    t.regex(await expectExaError(t, await search(apiKey(client.key), body), 400, 'INVALID_REQUEST_BODY'), message, JSON.stringify(body));
  }
  for (const [body, message] of [
    [{ text: true }, /urls is required/],
    [{ urls: [] }, /urls/],
    [{ urls: Array.from({ length: 21 }, (_, i) => `https://example.org/${i}`) }, /urls/],
  ] as const) {
    t.regex(await expectExaError(t, await postJson(bench.gateway, '/exa/contents', body, apiKey(client.key)), 400, 'INVALID_REQUEST_BODY'), message, JSON.stringify(body));
  }
  t.is(bench.upstream.requests.length, 0, 'nothing invalid reached the upstream');

  const first = await search(apiKey(client.key));
  t.is(first.status, 200, 'the refusals above cost nothing');
  const spent = await search(apiKey(client.key));
  t.regex(await expectExaError(t, spent, 402, 'NO_MORE_CREDITS'), /^daily allowance exhausted: 1 of 1 units used today/);
  t.is(spent.headers.get('x-ratelimit-scope'), 'day');

  const limited = await bench.accountKey({ ratePerMinute: 1 });
  t.is((await search(apiKey(limited.key))).status, 200);
  const refused = await search(apiKey(limited.key));
  t.regex(await expectExaError(t, refused, 429, 'RATE_LIMIT_EXCEEDED'), /^rate limit exceeded: /);
  t.regex(refused.headers.get('retry-after') ?? '', /^\d+$/);
});

test('§7.5: upstream failures are 502 and 503 UPSTREAM_ERROR, 504 UPSTREAM_TIMEOUT', async (t) => {
  const bench = await dialectBench(t, { timeoutMs: STALL_TIMEOUT_MS });
  const search = (query: string) => bench.gateway.post('/exa/search', { query }, apiKey(TEST_KEY));
  bench.upstream.answer(UPSTREAM_FAILURES.failure);
  await expectExaError(t, await search('fails'), 502, 'UPSTREAM_ERROR');
  bench.upstream.answer(UPSTREAM_FAILURES.timeout);
  t.regex(await expectExaError(t, await search('stalls'), 504, 'UPSTREAM_TIMEOUT'), /timed out/);
  bench.upstream.answer(UPSTREAM_FAILURES.unavailable);
  const unavailable = await search('rate limited upstream');
  await expectExaError(t, unavailable, 503, 'UPSTREAM_ERROR');
  t.is(unavailable.headers.get('retry-after'), '30');
});

test('under /exa, an unknown path (404, naming the served routes), a wrong method (405 with Allow), a body too large (413) or not JSON (415) answer in Exa\'s shape', async (t) => {
  const bench = await dialectBench(t, { config: { server: { maxBodyBytes: 1024 } } });
  t.is(
    await expectExaError(t, await bench.gateway.post('/exa/answer', { query: 'q' }, apiKey(TEST_KEY)), 404, 'NOT_FOUND'),
    'no route for POST /exa/answer; searchgate serves POST /exa/search, POST /exa/contents here',
  );
  const get = await fetch(`${bench.gateway.url}/exa/contents`, { headers: apiKey(TEST_KEY) });
  t.regex(await expectExaError(t, get, 405, 'METHOD_NOT_ALLOWED'), /method GET is not allowed/);
  t.is(get.headers.get('allow'), 'POST');
  await expectExaError(t, await bench.gateway.post('/exa/search', { query: 'x'.repeat(2000) }, apiKey(TEST_KEY)), 413, 'INVALID_REQUEST_BODY');
  const text = await fetch(`${bench.gateway.url}/exa/search`, { method: 'POST', headers: { ...apiKey(TEST_KEY), 'content-type': 'text/plain' }, body: 'q' });
  t.regex(await expectExaError(t, text, 415, 'INVALID_REQUEST_BODY'), /Content-Type must be application\/json/);
});

test('contents: text per URL found, a status per URL requested (CRAWL_NOT_FOUND with the page\'s status…); charged once', async (t) => {
  const bench = await dialectBench(t);
  const client = await bench.accountKey({ dailyAllowance: 10 });
  const urls = [bench.pages.article, bench.pages.missing, bench.pages.refused, 'ftp://example.org/file'];
  const response = await bench.gateway.post('/exa/contents', { urls, text: true }, apiKey(client.key));
  t.is(response.status, 200);
  const body = await json(response);
  t.is(body.requestId, response.headers.get('x-log-id'));
  t.is(body.results.length, 1);
  const [page] = body.results;
  t.like(page, { id: bench.pages.article, url: bench.pages.article, title: ARTICLE_TITLE, publishedDate: '2024-02-03T04:05:06.000Z', author: null });
  for (const sentence of ARTICLE_SENTENCES) t.true(page.text.includes(sentence), sentence);
  t.deepEqual(body.statuses, [
    { id: bench.pages.article, status: 'success' },
    { id: bench.pages.missing, status: 'error', error: { tag: 'CRAWL_NOT_FOUND', httpStatusCode: 404 } },
    { id: bench.pages.refused, status: 'error', error: { tag: 'CRAWL_UNKNOWN_ERROR', httpStatusCode: 500 } },
    { id: 'ftp://example.org/file', status: 'error', error: { tag: 'CRAWL_UNKNOWN_ERROR', httpStatusCode: 500 } },
  ]);
  t.is(response.headers.get('x-ratelimit-remaining'), '9', 'four URLs, one charge');

  // exa-py's default (none of text/highlights/summary: text), the legacy ids, a cap, highlights and summary.
  const defaults = await json(await bench.gateway.post('/exa/contents', { ids: [bench.pages.article] }, apiKey(client.key)));
  t.is(defaults.results[0].text, page.text);
  const capped = await json(await bench.gateway.post('/exa/contents', { urls: [bench.pages.article], text: { maxCharacters: 40 } }, apiKey(client.key)));
  t.is(capped.results[0].text, [...page.text].slice(0, 40).join(''));
  const passages = await json(await bench.gateway.post('/exa/contents', { urls: [bench.pages.article], highlights: true, summary: true }, apiKey(client.key)));
  t.false('text' in passages.results[0]);
  t.is(passages.results[0].highlights.length, 1);
  // Both from the page's leading sentences, on one line.
  t.true(passages.results[0].highlights[0].includes(ARTICLE_SENTENCES[0]!));
  t.true(passages.results[0].summary.includes(`${ARTICLE_SENTENCES[0]} ${ARTICLE_SENTENCES[1]}`));
  t.is(bench.site.requests.filter((request) => request.url === '/article').length, 1, 'each page fetched once');
});

test('contents: livecrawlTimeout (ms) bounds the wait (CRAWL_TIMEOUT); a refused address is SOURCE_NOT_AVAILABLE', async (t) => {
  const bench = await dialectBench(t);
  const slow = await json(await bench.gateway.post('/exa/contents', { urls: [bench.pages.slow], livecrawlTimeout: 300 }, apiKey(TEST_KEY)));
  t.deepEqual(slow.statuses, [{ id: bench.pages.slow, status: 'error', error: { tag: 'CRAWL_TIMEOUT', httpStatusCode: 408 } }]);
  t.deepEqual(slow.results, []);

  const strict = await dialectBench(t, { local: { allowPrivateNetworks: false } });
  const blocked = await json(await strict.gateway.post('/exa/contents', { urls: [strict.pages.article] }, apiKey(TEST_KEY)));
  t.deepEqual(blocked.statuses, [{ id: strict.pages.article, status: 'error', error: { tag: 'SOURCE_NOT_AVAILABLE', httpStatusCode: 403 } }]);
});

test('over the embedded default: search and contents answer from the local index', async (t) => {
  const gateway = await embeddedDefaultGateway(t);
  const { url, text } = INDEXED_PAGE;
  const search = await json(await gateway.post('/exa/search', { query: 'vacuuming', contents: { text: { maxCharacters: 10_000 } } }));
  t.deepEqual(search.results, [{ id: url, url, title: 'Routine vacuuming', publishedDate: '2024-05-05T10:00:00.000Z', author: null, text }]);
  const contents = await json(await gateway.post('/exa/contents', { urls: [url], text: true }));
  t.like(contents.results[0], { id: url, title: 'Routine vacuuming', text });
  t.deepEqual(contents.statuses, [{ id: url, status: 'success' }]);
});

test('statuses tags: what the dialect writes, the provider reads back; an unknown tag is an error', (t) => {
  const failures: PageFailure[] = [{ failure: 'not_found', httpStatus: 410 }, { failure: 'timeout' }, { failure: 'blocked' }, { failure: 'error' }];
  for (const failure of failures) t.deepEqual(pageFailureOf(crawlError(failure)), failure);
  t.deepEqual(crawlError({ failure: 'not_found' }), { tag: 'CRAWL_NOT_FOUND', httpStatusCode: 404 });
  t.deepEqual(pageFailureOf({ tag: 'CRAWL_NOT_FOUND', httpStatusCode: null }), { failure: 'not_found' });
  t.deepEqual(pageFailureOf({ tag: 'SOMETHING_NEW', httpStatusCode: 500 }), { failure: 'error' });
  t.deepEqual(pageFailureOf(undefined), { failure: 'error' });
});

test('searchgate\'s own exa provider, pointed at this dialect, searches and fetches contents through it (both directions share wire.ts)', async (t) => {
  const bench = await dialectBench(t);
  const front = await startGateway({
    providers: { 'exa-up': { type: 'exa', baseUrl: `${bench.gateway.url}/exa`, apiKey: TEST_KEY } },
    search: { chain: ['exa-up'] },
    content: { chain: ['exa-up'] },
  });
  t.teardown(() => front.close());

  const search = await json(await front.post('/v1/web-search', { query: 'postgres vacuum', count: 2 }));
  t.like(search.data.webPages.value, [
    { name: 'Routine Vacuuming', url: UPSTREAM_RESULTS[0]!.url, snippet: UPSTREAM_RESULTS[0]!.snippet, datePublished: PUBLISHED },
    { url: UPSTREAM_RESULTS[1]!.url, snippet: UPSTREAM_RESULTS[1]!.snippet },
  ]);
  t.like(bench.upstream.lastBody(), { query: 'postgres vacuum', count: 2 });

  const contents = await json(await front.post('/exa/contents', { urls: [bench.pages.article, bench.pages.missing] }));
  t.true(contents.results[0].text.includes(ARTICLE_SENTENCES[0]!));
  t.deepEqual(contents.statuses[1], { id: bench.pages.missing, status: 'error', error: { tag: 'CRAWL_NOT_FOUND', httpStatusCode: 404 } }, 'the page\'s failure read back from statuses');
});

test('exa-js: search, getContents, and an ExaError with the status and message for a deleted key and a spent allowance', async (t) => {
  const bench = await dialectBench(t);
  bench.upstream.answer(searchOk(WITH_TEXT));
  const client = await bench.accountKey({ dailyAllowance: 3 });
  const base = `${bench.gateway.url}/exa`;
  const exa = new Exa(client.key, base);

  const found = await exa.search('postgres vacuum', { numResults: 3 });
  t.is(found.results.length, 3);
  t.like(found.results[0], { id: UPSTREAM_RESULTS[0]!.url, title: 'Routine Vacuuming', publishedDate: PUBLISHED, text: WITH_TEXT[0]!.text });
  const contents = await exa.getContents([bench.pages.article, bench.pages.missing], { text: true });
  t.true(contents.results[0]!.text.includes(ARTICLE_SENTENCES[0]!));
  t.deepEqual((contents as any).statuses[1], { id: bench.pages.missing, status: 'error', error: { tag: 'CRAWL_NOT_FOUND', httpStatusCode: 404 } });

  await exa.search('spends the last unit');
  const spent = await t.throwsAsync(exa.search('one too many'), { instanceOf: ExaError });
  t.is(spent?.statusCode, 402);
  t.regex(spent?.message ?? '', /^daily allowance exhausted/);
  const refused = await t.throwsAsync(new Exa(bench.keys.deleted, base).search('q'), { instanceOf: ExaError });
  t.is(refused?.statusCode, 401);
  t.regex(refused?.message ?? '', /^Invalid API key \(searchgate: API key .+ has been deleted/);
});
