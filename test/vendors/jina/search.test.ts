import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import { searchGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, searchCall, type FailureCase } from '../../helpers/upstream-errors.js';
import { JINA_CORPUS, JINA_KEY, startFakeJina, type JinaFault, type JinaResult } from './fake.js';
import { pathOf } from '../../helpers/vendor-fake.js';

async function setup(
  t: ExecutionContext,
  { provider = {}, corpus, now }: { provider?: Record<string, unknown>; corpus?: JinaResult[]; now?: () => number } = {},
) {
  const jina = await startFakeJina(corpus ? { corpus } : {});
  const gateway = await searchGateway(t, jina, 'jina', { type: 'jina', searchBaseUrl: jina.searchBaseUrl, apiKey: JINA_KEY, ...provider }, now ? { now } : {});
  return { jina, gateway };
}

const dated = (day: string | undefined, i: number): JinaResult => ({
  title: `Zeppelin report ${i}`,
  url: `https://reports${i}.example/zeppelin`,
  description: `Zeppelin report number ${i}.`,
  ...(day ? { date: day } : {}),
  content: `Report ${i}`,
  text: `Report ${i}`,
});

/** Zeppelin reports around 2025-03-01: in the last week (one dated relatively, as Google does), older, and undated. */
const DATED = [
  dated('2025-02-27', 0),
  dated('2 days ago', 1),
  dated(undefined, 2),
  dated('Feb 24, 2025', 3),
  dated('2025-02-05', 4),
  dated('2025-02-28', 5),
  dated('2024-12-01', 6),
];

test('snippet mode: POST s.jina.ai/ with the key, no-content and SERP parameters; descriptions become snippets', async (t) => {
  const { jina, gateway } = await setup(t);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lilium', count: 3, language: 'de' }));

  t.is(jina.requests.length, 1);
  const request = jina.requests[0]!;
  t.is(request.method, 'POST');
  t.is(pathOf(request), '/s/');
  t.is(request.headers.authorization, `Bearer ${JINA_KEY}`);
  t.is(request.headers.accept, 'application/json');
  t.is(request.headers['x-respond-with'], 'no-content');
  t.is(request.headers['x-site'], undefined);
  t.deepEqual(request.body, { q: 'lilium', num: 3, hl: 'de' });

  const results = body.data.webPages.value as any[];
  t.deepEqual(results.map((result) => result.url), JINA_CORPUS.slice(0, 3).map((result) => result.url));
  t.deepEqual(results.map((result) => result.name), JINA_CORPUS.slice(0, 3).map((result) => result.title));
  t.deepEqual(results.map((result) => result.snippet), JINA_CORPUS.slice(0, 3).map((result) => result.description));
  t.false('datePublished' in results[0]);
  t.is(results[1].datePublished, '2025-10-17T00:00:00.000Z', 'the SERP date "Oct 17, 2025"');
  t.is(results[2].datePublished, '2025-10-16T00:00:00.000Z');
  for (const result of results) t.false('text' in result);
});

test('include domains go in X-Site, excluded ones become -site: operators, and both are honoured', async (t) => {
  const { jina, gateway } = await setup(t);
  const body = await expectSearchOk(
    t,
    await gateway.post('/v1/web-search', {
      query: 'lilium',
      count: 10,
      includeDomains: ['news.example.org', 'techcrunch.com'],
      excludeDomains: ['archive.example'],
    }),
  );
  const request = jina.requests[0]!;
  t.is(request.headers['x-site'], 'news.example.org, techcrunch.com');
  t.is(request.body.q, 'lilium -site:archive.example');
  t.is(request.body.num, 10, 'native filters need no over-fetch');
  const urls = body.data.webPages.value.map((result) => result.url);
  t.is(urls.length, 10);
  t.true(urls.every((url) => /^https:\/\/(news\.example\.org|techcrunch\.com)\//.test(url)), urls.join(' '));
  t.is(urls[0], JINA_CORPUS[2]!.url);
});

test('freshness is not a Jina parameter: a preset and a date range are applied by the gateway on the dates Jina returns', async (t) => {
  const now = Date.parse('2025-03-01T00:00:00Z');
  const { jina, gateway } = await setup(t, { corpus: DATED, now: () => now });

  const week = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'zeppelin', count: 3, freshness: 'oneWeek' }));
  t.deepEqual(jina.requests[0]!.body, { q: 'zeppelin', num: 6 }, 'no date parameter; over-fetched twice the count');
  t.deepEqual(
    week.data.webPages.value.map((result: any) => [result.name, result.datePublished]),
    [
      ['Zeppelin report 0', '2025-02-27T00:00:00.000Z'],
      ['Zeppelin report 1', '2025-02-27T00:00:00.000Z'],
      ['Zeppelin report 3', '2025-02-24T00:00:00.000Z'],
    ],
  );

  const range = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'zeppelin', count: 2, freshness: '2025-02-01..2025-02-10' }));
  t.deepEqual(
    jina.requests.slice(1).map((request) => request.body),
    [
      { q: 'zeppelin', num: 4 },
      { q: 'zeppelin', num: 4, page: 2 },
    ],
    'the first page of four had no match: the gateway pages on',
  );
  t.deepEqual(range.data.webPages.value.map((result: any) => result.name), ['Zeppelin report 4']);
});

test('text mode lets Jina read the pages: main content with links discarded, or innerText when configured', async (t) => {
  const { jina, gateway } = await setup(t);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lilium', count: 3, contents: { text: true } }));
  const request = jina.requests[0]!;
  t.is(request.headers['x-respond-with'], undefined);
  t.is(request.headers['x-return-format'], undefined, "Jina's default format: Readability's main content");
  t.is(request.headers['x-md-link-style'], 'discarded');
  t.is(request.headers['x-retain-images'], 'none');
  const results = body.data.webPages.value as any[];
  t.deepEqual(results.map((result) => result.text), JINA_CORPUS.slice(0, 3).map((result) => result.content));
  t.is(results[2].datePublished, '2025-10-16T17:05:00.000Z', 'the page publishedTime wins over the SERP date');
  for (const result of results) t.false('snippet' in result);

  const innerText = await setup(t, { provider: { readerFormat: 'text' } });
  const plain = await expectSearchOk(t, await innerText.gateway.post('/v1/web-search', { query: 'lilium', count: 2, contents: { text: { max_characters: 30 } } }));
  t.is(innerText.jina.requests[0]!.headers['x-return-format'], 'text');
  t.deepEqual(plain.data.webPages.value.map((result: any) => result.text), JINA_CORPUS.slice(0, 2).map((result) => result.text.slice(0, 30)));
});

test('format "markdown": a deployment reading innerText asks Jina for its markdown content for that request', async (t) => {
  const { jina, gateway } = await setup(t, { provider: { readerFormat: 'text' } });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lilium', count: 2, contents: { text: { format: 'markdown' } } }));
  t.is(jina.requests[0]!.headers['x-return-format'], undefined);
  t.is(jina.requests[0]!.headers['x-md-link-style'], 'discarded');
  t.deepEqual(body.data.webPages.value.map((result: any) => result.text), JINA_CORPUS.slice(0, 2).map((result) => result.content));
});

test('count is honoured by paging: num 20 per call, then page 2, page 3', async (t) => {
  const { jina, gateway } = await setup(t);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lilium', count: 50 }));
  t.deepEqual(body.data.webPages.value.map((result) => result.url), JINA_CORPUS.slice(0, 50).map((result) => result.url));
  t.deepEqual(
    jina.requests.map((request) => [request.body.num, request.body.page]),
    [
      [20, undefined],
      [20, 2],
      [20, 3],
    ],
  );

  // A corpus smaller than count: the short page ends the paging.
  const small = await setup(t, { corpus: JINA_CORPUS.slice(0, 25) });
  const few = await expectSearchOk(t, await small.gateway.post('/v1/web-search', { query: 'lilium', count: 50 }));
  t.is(few.data.webPages.value.length, 25);
  t.is(small.jina.requests.length, 2);
});

test('language: the request tag or the configured default becomes hl; the configured country gl', async (t) => {
  const { jina, gateway } = await setup(t, { provider: { language: 'fr', country: 'BR' } });
  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lilium', count: 1, language: 'pt-BR' }));
  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lilium', count: 1, language: 'de-AT' }));
  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'lilium', count: 1 }));
  t.deepEqual(
    jina.requests.map((request) => [request.body.hl, request.body.gl]),
    [
      ['pt-br', 'br'],
      ['de', 'br'],
      ['fr', 'br'],
    ],
  );
});

test('a query without hits (Jina answers 422 "No search results available") is an empty result, not an error', async (t) => {
  const { jina, gateway } = await setup(t);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'zeppelin' }));
  t.deepEqual(body.data.webPages.value, []);
  t.is(jina.requests.length, 1);
});

const WRONG_KEY = 'jina_wrong_key_000000';

const FAILURES: Array<FailureCase<JinaFault | 'wrong_key' | 'no_key'>> = [
  { failure: 'wrong_key', options: { apiKey: WRONG_KEY }, status: 502, kind: 'auth', mentions: /jina: HTTP 401: Invalid API key/ },
  { failure: 'no_key', options: { apiKey: undefined }, status: 502, kind: 'auth', mentions: /jina: HTTP 401: Authentication is required/ },
  { failure: 'rate_limited', status: 503, kind: 'rate_limited', retryAfter: '7', mentions: /jina: HTTP 429: Per UID rate limit exceeded/ },
  { failure: 'quota', status: 503, kind: 'quota', mentions: /jina: HTTP 402: Account balance not enough/ },
  { failure: 'quota_in_200', status: 503, kind: 'quota', mentions: /jina: envelope code 402: InsufficientBalanceError/ },
  { failure: 'server_error', status: 502, kind: 'unavailable', mentions: /jina: HTTP 500: Search\(web\) failed/ },
  { failure: 'malformed', status: 502, kind: 'garbage', mentions: /jina: reply is not JSON/ },
  { failure: 'wrong_shape', status: 502, kind: 'garbage', mentions: /jina: reply has no data array/ },
  { failure: 'stall', options: { timeoutMs: 150 }, status: 504, kind: 'timeout', mentions: /jina/ },
];

for (const { failure, options, ...expected } of FAILURES) {
  test(`search failure ${failure} becomes our ${expected.status}, naming the provider but never the key`, async (t) => {
    const { jina, gateway } = await setup(t, { provider: options });
    const fail = () => failure !== 'wrong_key' && failure !== 'no_key' && jina.fail(failure);
    await expectUpstreamError(t, { ...searchCall(gateway, 'jina', 'lilium'), secrets: [JINA_KEY, WRONG_KEY], requests: jina.requests, fail }, expected);
  });
}
