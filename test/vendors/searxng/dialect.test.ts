/**
 * The SearXNG dialect (../shared/spec/dialects.md §5.4, §7.7) over real HTTP: a gateway in front of a
 * scripted upstream (and once the embedded local index), driven as LangChain's SearxSearchWrapper
 * and litellm's searxng provider drive a SearXNG instance.
 */
import test, { type ExecutionContext } from 'ava';
import type { DialectRoute } from '../../../src/dialects/types.js';
import { searxngDialect } from '../../../src/vendors/searxng/dialect.js';
import type { SearxngResponse } from '../../../src/vendors/searxng/wire.js';
import { metricValue } from '../../helpers/faults.js';
import { TEST_KEY } from '../../helpers/gateway.js';
import {
  bearer,
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
} from '../../helpers/dialect-bench.js';

const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers });

/** An answer's status and `{"error"}` body, held to SearXNG's error shape; returns the message. */
async function expectSearxngError(t: ExecutionContext, response: Response, status: number): Promise<string> {
  const text = await response.text();
  t.is(response.status, status, text);
  const body = JSON.parse(text) as { error: string };
  t.deepEqual(Object.keys(body), ['error']);
  t.regex(response.headers.get('x-log-id') ?? '', /^[0-9a-f]{32}$/);
  return body.error;
}

/** The internal request a route reads from a query string. */
const readOf = (route: DialectRoute, query: Record<string, string>) => readRequest(route, { method: 'GET', query });

test('GET /searxng/search with a Bearer key answers SearXNG JSON: every key clients read, honest defaults, R1 headers', async (t) => {
  const { gateway, keys: { working: key } } = await dialectBench(t, PAGED);
  const response = await get(`${gateway.url}/searxng/search?q=postgres+vacuum&format=json&language=en&categories=general&engines=google`, bearer(key));
  t.is(response.status, 200);
  const body = (await response.json()) as SearxngResponse;
  t.deepEqual(Object.keys(body).sort(), ['answers', 'corrections', 'infoboxes', 'number_of_results', 'query', 'results', 'suggestions', 'unresponsive_engines']);
  t.is(body.query, 'postgres vacuum');
  t.is(body.number_of_results, PAGED_TOTAL);
  for (const empty of ['answers', 'corrections', 'infoboxes', 'suggestions', 'unresponsive_engines'] as const) t.deepEqual(body[empty], []);
  t.is(body.results.length, 10, 'pages of 10');
  const [first, untitled] = body.results;
  t.deepEqual(first, {
    url: PAGED_RESULTS[0]!.url as string,
    title: 'Routine Vacuuming',
    content: 'PostgreSQL databases require periodic maintenance known as vacuuming.',
    engine: 'searchgate',
    engines: ['searchgate'],
    category: 'general',
    publishedDate: '2024-11-14T00:00:00.000Z',
    positions: [1],
    score: 1,
    parsed_url: ['https', 'www.postgresql.org', '/docs/current/routine-vacuuming.html', 'v=1', 'lang=en', 'autovacuum'],
    template: 'default.html',
  });
  // R6: a title and content that are strings (LangChain joins them), a null date, a rank-derived score.
  t.is(untitled!.title, '');
  t.is(untitled!.content, '');
  t.is(untitled!.publishedDate, null);
  t.deepEqual(body.results.map((result) => result.score), body.results.map((_result, i) => (10 - i) / 10));
  t.deepEqual(body.results.map((result) => result.positions[0]), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  // R1: the account's allowance, the log id, the cache.
  t.is(response.headers.get('x-ratelimit-limit'), '1000');
  t.is(response.headers.get('x-ratelimit-remaining'), '999');
  t.regex(response.headers.get('x-ratelimit-reset') ?? '', /^\d+$/);
  t.regex(response.headers.get('x-log-id') ?? '', /^[0-9a-f]{32}$/);
  t.is(response.headers.get('x-cache'), 'MISS');
  const again = await get(`${gateway.url}/searxng/search?q=postgres+vacuum&format=json&language=en`, bearer(key));
  t.is(again.headers.get('x-cache'), 'HIT');
  t.is(again.headers.get('x-ratelimit-remaining'), '998', 'a cache hit is charged like any answer');
});

test('the key in the path: /searxng/{key}/search wins over Bearer, is percent-decoded once, and shows in no log line, metric or answer', async (t) => {
  const oddKey = 'sk-50%off/key+x';
  const { gateway, keys: { working: key } } = await dialectBench(t, { ...PAGED, config: { auth: { keys: [{ name: 'odd', key: oddKey }] } } });
  const answers: string[] = [];
  const pathKey = await get(`${gateway.url}/searxng/${key}/search?q=vacuum&format=json`, bearer('sk-not-a-key-000'));
  answers.push(await pathKey.text());
  t.is(pathKey.status, 200, 'the path key is used, not the Bearer');
  t.is(pathKey.headers.get('location'), null);
  const encoded = await get(`${gateway.url}/searxng/${encodeURIComponent(oddKey)}/search?q=vacuum&format=json`);
  answers.push(await encoded.text());
  t.is(encoded.status, 200, 'sk-50%25off%2Fkey%2Bx is read as sk-50%off/key+x');
  const wrong = await get(`${gateway.url}/searxng/sk-not-a-key-000/search?q=vacuum&format=json`);
  const message = await expectSearxngError(t, wrong, 401);
  t.false(message.includes('sk-not-a-key-000'));
  const unknownPath = await get(`${gateway.url}/searxng/${key}/serch?q=vacuum`);
  const notFound = await expectSearxngError(t, unknownPath, 404);
  t.regex(notFound, /^no route for GET \/searxng\/\[REDACTED\]\/serch; searchgate serves GET\|POST \/searxng\/search, GET\|POST \/searxng\/:key\/search/);
  answers.push(notFound);

  const logged = gateway.logLines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request');
  t.true(logged.some((line) => line.path === '/searxng/[REDACTED]/search' && line.route === '/searxng/{key}/search' && line.status === 200));
  t.true(logged.some((line) => line.path === '/searxng/[REDACTED]/serch' && line.status === 404));
  t.is(await metricValue(gateway, 'searchgate_http_requests_total', { route: '/searxng/{key}/search', status: '200' }), 2);
  await expectKeysNowhere(t, gateway, [key, oddKey, 'sk-not-a-key-000'], answers);
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  t.false(metrics.includes('50%off'));
});

test('a key in a path with doubled slashes is redacted too, in the 404 and in the log (found by the hostile-request fuzz)', async (t) => {
  const { gateway, keys: { working: key } } = await dialectBench(t, PAGED);
  const answers: string[] = [];
  for (const path of [`//searxng/${key}`, `//searxng/${key}/search?q=vacuum`, `/searxng//${key}/search`]) {
    const response = await get(`${gateway.url}${path}`, bearer(key));
    const message = await expectSearxngError(t, response, 404);
    t.regex(message, /\[REDACTED\]/);
    answers.push(message);
  }
  await expectKeysNowhere(t, gateway, [key], answers);
});

test('GET /searxng and /searxng/{key} with q are searched directly, never redirected; without q they are 404', async (t) => {
  const { gateway, keys: { working: key } } = await dialectBench(t, PAGED);
  for (const url of [`${gateway.url}/searxng?q=vacuum&format=json`, `${gateway.url}/searxng/${key}?q=vacuum&format=json`]) {
    const response = await fetch(url, { headers: bearer(key), redirect: 'manual' });
    t.is(response.status, 200, url);
    t.is(response.headers.get('location'), null);
    t.is(((await response.json()) as SearxngResponse).results.length, 10);
  }
  for (const url of [`${gateway.url}/searxng`, `${gateway.url}/searxng/${key}?format=json`]) {
    const message = await expectSearxngError(t, await get(url, bearer(key)), 404);
    t.regex(message, /search only with a q parameter; searchgate serves GET\|POST \/searxng\/search/);
    t.false(message.includes(key));
  }
  await expectKeysNowhere(t, gateway, [key]);
});

test('POST takes form fields or a JSON body, which win over the query string; explicit nulls are absent (R5)', async (t) => {
  const { gateway, keys: { working: key }, upstream: { bodies: upstreamBodies } } = await dialectBench(t, PAGED);
  const form = await fetch(`${gateway.url}/searxng/search?q=ignored&pageno=9`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/x-www-form-urlencoded' },
    body: 'q=form+query&format=json&pageno=2',
  });
  t.is(form.status, 200);
  const formBody = (await form.json()) as SearxngResponse;
  t.is(formBody.query, 'form query');
  t.deepEqual(formBody.results[0]!.positions, [11]);
  const json = await fetch(`${gateway.url}/searxng/${key}/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ q: 'json query', format: 'json', pageno: null, time_range: null, language: null }),
  });
  t.is(json.status, 200);
  t.deepEqual(((await json.json()) as SearxngResponse).results[0]!.positions, [1]);
  t.deepEqual(upstreamBodies().map((body) => body.query), ['form query', 'json query']);
  const xml = await fetch(`${gateway.url}/searxng/search`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'text/xml' }, body: '<q/>' });
  t.regex(await expectSearxngError(t, xml, 415), /Content-Type must be application\/json or application\/x-www-form-urlencoded/);
});

test('pageno asks for the next ten (R10): the upstream is asked for offset + 10, the answer holds results 11–20', async (t) => {
  const { gateway, keys: { working: key }, upstream: { bodies: upstreamBodies } } = await dialectBench(t, PAGED);
  const response = await get(`${gateway.url}/searxng/search?q=vacuum&format=json&pageno=2`, bearer(key));
  const body = (await response.json()) as SearxngResponse;
  t.deepEqual(body.results.map((result) => result.url), PAGED_RESULTS.slice(10, 20).map((result) => result.url));
  t.deepEqual(body.results.map((result) => result.positions[0]), [11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
  t.is(upstreamBodies()[0]!.count, 20);
  const past = (await (await get(`${gateway.url}/searxng/search?q=vacuum&format=json&pageno=4`, bearer(key))).json()) as SearxngResponse;
  t.deepEqual(past.results, [], 'a page past the results is empty, not an error');
});

test('the request read: site: operators (R8), time_range (R9), language (all and auto are none), pageno', (t) => {
  const [route] = searxngDialect.routes;
  const request = readOf(route!, { q: 'rust async site:docs.rs -site:reddit.com', format: 'json', pageno: '3', time_range: 'week', language: 'pt-BR' });
  t.like(request, { query: 'rust async', count: 10, offset: 20, includeDomains: ['docs.rs'], excludeDomains: ['reddit.com'], language: 'pt-BR' });
  t.is(request.freshness.raw, 'oneWeek');
  for (const [range, preset] of [['day', 'oneDay'], ['month', 'oneMonth'], ['year', 'oneYear'], ['', 'noLimit']]) {
    t.is(readOf(route!, { q: 'x', format: 'json', time_range: range! }).freshness.raw, preset);
  }
  for (const language of ['all', 'auto', '']) t.is(readOf(route!, { q: 'x', format: 'json', language }).language, null);
  t.like(readOf(route!, { q: '(vacuum) (site:a.example OR site:b.example)', format: 'json' }), { query: 'vacuum', includeDomains: ['a.example', 'b.example'] });
});

test('invalid requests are refused before the key is looked at, and never charged (R4): No query 400, a format other than json 403', async (t) => {
  const { gateway, keys: { working: key } } = await dialectBench(t, PAGED);
  for (const bad of [key, 'sk-not-a-key-000']) {
    t.is(await expectSearxngError(t, await get(`${gateway.url}/searxng/search?format=json`, bearer(bad)), 400), 'No query');
    t.is(await expectSearxngError(t, await get(`${gateway.url}/searxng/search?q=%20&format=json`, bearer(bad)), 400), 'No query');
    t.regex(await expectSearxngError(t, await get(`${gateway.url}/searxng/search?q=x&format=html`, bearer(bad)), 403), /format=html is not enabled.*send format=json/);
    t.regex(await expectSearxngError(t, await get(`${gateway.url}/searxng/search?q=x`, bearer(bad)), 403), /format html \(the default\) is not enabled/);
    t.regex(await expectSearxngError(t, await get(`${gateway.url}/searxng/search?q=x&format=json&pageno=0`, bearer(bad)), 400), /pageno/);
    t.regex(await expectSearxngError(t, await get(`${gateway.url}/searxng/search?q=x&format=json&time_range=decade`, bearer(bad)), 400), /time_range/);
    t.regex(await expectSearxngError(t, await get(`${gateway.url}/searxng/search?q=x&format=json&language=en_US!`, bearer(bad)), 400), /language/);
    t.regex(await expectSearxngError(t, await get(`${gateway.url}/searxng/search?q=site:a.example&format=json`, bearer(bad)), 400), /q must contain search terms/);
  }
  const ok = await get(`${gateway.url}/searxng/search?q=x&format=json`, bearer(key));
  t.is(ok.headers.get('x-ratelimit-remaining'), '999', 'none of the refusals was charged');
});

test('§7.7 keys: missing 401 naming both places, unknown and deleted 401, disabled account 403, all as {"error"}', async (t) => {
  const { gateway, keys: { deleted: deletedKey, disabled: disabledKey } } = await dialectBench(t, PAGED);
  const search = (headers: Record<string, string>, path = '/searxng/search') => get(`${gateway.url}${path}?q=x&format=json`, headers);
  t.is(
    await expectSearxngError(t, await search({}), 401),
    'missing API key: put it in the path (/searxng/{key}/search) or send Authorization: Bearer <key>',
  );
  t.is(await expectSearxngError(t, await search(bearer('sk-not-a-key-000')), 401), 'invalid API key');
  t.regex(await expectSearxngError(t, await search({}, `/searxng/${deletedKey}/search`), 401), /has been deleted/);
  t.regex(await expectSearxngError(t, await search(bearer(disabledKey)), 403), /is disabled/);
  await expectKeysNowhere(t, gateway, [deletedKey, disabledKey]);
});

test('allowance exhausted and rate limited are 429 with Retry-After and X-RateLimit-Scope', async (t) => {
  const now = Date.UTC(2026, 10, 23, 12);
  const bench = await dialectBench(t, { ...PAGED, now });
  const { exhausted, limited } = await limitRefusals(t, bench, (key, q) => get(`${bench.gateway.url}/searxng/search?q=${q}&format=json`, bearer(key)));
  t.regex(await expectSearxngError(t, exhausted, 429), /^daily allowance exhausted/);
  t.regex(await expectSearxngError(t, limited, 429), /^rate limit exceeded/);
});

for (const [query, status, message] of [
  ['failure', 502, /up/],
  ['unavailable', 503, /rate/],
  ['timeout', 504, /time/],
] as const) {
  test(`an upstream ${query} is ${status} with an error body, never a 200 with unresponsive_engines, and is refunded`, async (t) => {
    const { gateway, keys: { working: key } } = await dialectBench(t, query === 'timeout' ? { ...PAGED, timeoutMs: STALL_TIMEOUT_MS } : PAGED);
    const response = await get(`${gateway.url}/searxng/search?q=${query}&format=json`, bearer(key));
    t.regex(await expectSearxngError(t, response, status), message);
    if (status === 503) t.is(response.headers.get('retry-after'), '30');
    const next = await get(`${gateway.url}/searxng/search?q=fine&format=json`, bearer(key));
    t.is(next.headers.get('x-ratelimit-remaining'), '999', 'the failed request was refunded');
  });
}

test('404 under the prefix names the routes; a wrong method is 405 with Allow; both as {"error"}', async (t) => {
  const { gateway } = await dialectBench(t, PAGED);
  t.regex(await expectSearxngError(t, await get(`${gateway.url}/searxng/search/images`), 404), /^no route for GET \/searxng\/search\/images; searchgate serves/);
  const wrongMethod = await fetch(`${gateway.url}/searxng/search`, { method: 'DELETE', headers: bearer(TEST_KEY) });
  t.regex(await expectSearxngError(t, wrongMethod, 405), /method DELETE is not allowed/);
  t.regex(wrongMethod.headers.get('allow') ?? '', /GET.*POST|POST.*GET/);
});

test('an operator key is charged nothing and gets no allowance headers', async (t) => {
  const { gateway } = await dialectBench(t, PAGED);
  const response = await get(`${gateway.url}/searxng/search?q=vacuum&format=json`, bearer(TEST_KEY));
  t.is(response.status, 200);
  t.is(response.headers.get('x-ratelimit-limit'), null);
});

test('the embedded default: the local index answers /searxng/search', async (t) => {
  const gateway = await embeddedDefaultGateway(t);
  const response = await get(`${gateway.url}/searxng/${TEST_KEY}/search?q=vacuuming&format=json`);
  t.is(response.status, 200);
  const [result] = ((await response.json()) as SearxngResponse).results;
  t.like(result, { url: INDEXED_PAGE.url, title: INDEXED_PAGE.title, publishedDate: INDEXED_PAGE.datePublished, engine: 'searchgate' });
  t.regex(result!.content, /vacuum/i);
});
