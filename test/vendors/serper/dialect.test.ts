/**
 * The Serper dialect (../shared/spec/dialects.md §5.6, §7.9) over real HTTP: a gateway in front of a
 * scripted upstream (and once the embedded local index), driven as litellm (a JSON body) and
 * LangChain's GoogleSerperAPIWrapper (query parameters, an empty body) drive google.serper.dev.
 */
import test, { type ExecutionContext } from 'ava';
import { serperDialect } from '../../../src/vendors/serper/dialect.js';
import type { SerperError, SerperResponse } from '../../../src/vendors/serper/wire.js';
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
  postJson as postJsonTo,
  readRequest,
  STALL_TIMEOUT_MS,
  utcDay,
} from '../../helpers/dialect-bench.js';

/** POST /serper/search as litellm sends it: a JSON body. */
const postJson = (url: string, body: unknown, headers: Record<string, string>) => postJsonTo({ url }, '/serper/search', body, headers);

/** POST /serper/search as LangChain sends it: query parameters, Content-Type JSON, no body. */
const postQuery = (url: string, query: string, headers: Record<string, string>) =>
  fetch(`${url}/serper/search?${query}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } });

/** Serper's error shape: {message, statusCode} with statusCode = the status, and the message in the reason phrase. */
async function expectSerperError(t: ExecutionContext, response: Response, status: number): Promise<string> {
  const text = await response.text();
  t.is(response.status, status, text);
  const body = JSON.parse(text) as SerperError;
  t.deepEqual(Object.keys(body).sort(), ['message', 'statusCode']);
  t.is(body.statusCode, status);
  // The status line carries searchgate's reason: the part of the message a client showing only it needs.
  const reason = /\(searchgate: (.*)\)$/s.exec(body.message)?.[1] ?? body.message;
  t.true(response.statusText.includes(reason.replace(/[^\x20-\x7e]+/g, ' ').replace(/\s+/g, ' ').slice(0, 30)), `reason phrase: ${response.statusText}`);
  t.regex(response.headers.get('x-log-id') ?? '', /^[0-9a-f]{32}$/);
  return body.message;
}

const readOf = (query: Record<string, string>, body: Record<string, unknown> = {}) => readRequest(serperDialect.routes[0]!, { method: 'POST', query, body });

test('litellm: a JSON body with X-API-KEY answers searchParameters, organic and credits', async (t) => {
  const { gateway, keys: { working: key } } = await dialectBench(t, PAGED);
  const response = await postJson(gateway.url, { q: 'postgres vacuum', num: 3, gl: 'us' }, { 'x-api-key': key });
  t.is(response.status, 200);
  const body = (await response.json()) as SerperResponse;
  t.deepEqual(Object.keys(body).sort(), ['credits', 'organic', 'searchParameters']);
  t.deepEqual(body.searchParameters, { q: 'postgres vacuum', gl: 'us', num: 3, page: 1, type: 'search' });
  t.deepEqual(body.organic, [
    {
      title: 'Routine Vacuuming',
      link: PAGED_RESULTS[0]!.url as string,
      snippet: 'PostgreSQL databases require periodic maintenance known as vacuuming.',
      date: '2024-11-14',
      position: 1,
    },
    { title: '', link: 'https://untitled.example/page', snippet: '', position: 2 },
    { title: 'Result 2 <b> & co', link: 'https://site0.example/page-2', snippet: 'Snippet 2', position: 3 },
  ]);
  t.is(body.credits, 1, 'the units charged');
  t.is(response.headers.get('x-ratelimit-remaining'), '999');
  t.is(response.headers.get('x-cache'), 'MISS');
  t.regex(response.headers.get('x-log-id') ?? '', /^[0-9a-f]{32}$/);
});

test('LangChain: query parameters with an empty JSON body; hl is the language, gl is echoed; an operator key costs 0 credits', async (t) => {
  const { gateway, upstream: { bodies: upstreamBodies } } = await dialectBench(t, PAGED);
  const response = await postQuery(gateway.url, 'q=postgres+vacuum&gl=us&hl=en&num=10', { 'x-api-key': TEST_KEY });
  t.is(response.status, 200);
  const body = (await response.json()) as SerperResponse;
  t.deepEqual(body.searchParameters, { q: 'postgres vacuum', gl: 'us', hl: 'en', num: 10, page: 1, type: 'search' });
  t.is(body.organic.length, 10);
  t.is(body.credits, 0);
  t.is(upstreamBodies()[0]!.query, 'postgres vacuum');
  const get = await fetch(`${gateway.url}/serper/search?q=postgres+vacuum&num=2`, { headers: { 'x-api-key': TEST_KEY } });
  t.is(((await get.json()) as SerperResponse).organic.length, 2, 'GET reads the query string');
});

test('the body wins over the query string; explicit nulls are absent (R5)', async (t) => {
  const { gateway } = await dialectBench(t, PAGED);
  const response = await fetch(`${gateway.url}/serper/search?q=from+query&num=7`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY },
    body: JSON.stringify({ q: 'from body', num: 2, page: null, tbs: null, hl: null }),
  });
  const body = (await response.json()) as SerperResponse;
  t.deepEqual(body.searchParameters, { q: 'from body', num: 2, page: 1, type: 'search' });
  t.is(body.organic.length, 2);
});

test('keys: X-API-KEY first, then Bearer; never in logs, metrics or answers', async (t) => {
  const { gateway, keys: { working: key } } = await dialectBench(t, PAGED);
  const headerWins = await postJson(gateway.url, { q: 'x' }, { 'x-api-key': key, authorization: 'Bearer sk-not-a-key-000' });
  t.is(headerWins.status, 200);
  const bearerOnly = await postJson(gateway.url, { q: 'x' }, { authorization: `Bearer ${key}` });
  t.is(bearerOnly.status, 200);
  const wrongHeader = await postJson(gateway.url, { q: 'x' }, { 'x-api-key': 'sk-not-a-key-000', authorization: `Bearer ${key}` });
  t.regex(await expectSerperError(t, wrongHeader, 403), /^Unauthorized\. \(searchgate: invalid API key\)$/);
  await expectKeysNowhere(t, gateway, [key, 'sk-not-a-key-000'], [await headerWins.text(), await bearerOnly.text()]);
});

test('§7.9 keys: missing, unknown, deleted and a disabled account are all 403 "Unauthorized." with the reason', async (t) => {
  const { gateway, keys: { deleted: deletedKey, disabled: disabledKey } } = await dialectBench(t, PAGED);
  t.regex(await expectSerperError(t, await postJson(gateway.url, { q: 'x' }, {}), 403), /^Unauthorized\. \(searchgate: no API key: send "X-API-KEY: <API_KEY>"/);
  t.regex(await expectSerperError(t, await postJson(gateway.url, { q: 'x' }, { 'x-api-key': 'sk-not-a-key-000' }), 403), /^Unauthorized\. \(searchgate: invalid API key\)/);
  const deleted = await postQuery(gateway.url, 'q=x&gl=us&hl=en&num=10', { 'x-api-key': deletedKey });
  t.regex(await expectSerperError(t, deleted, 403), /^Unauthorized\. \(searchgate: API key sg_[0-9a-f]+… has been deleted/);
  t.regex(deleted.statusText, /^Forbidden - API key sg_[0-9a-f]+ has been deleted/, 'what requests shows in its HTTPError');
  t.regex(await expectSerperError(t, await postJson(gateway.url, { q: 'x' }, { 'x-api-key': disabledKey }), 403), /^Unauthorized\. \(searchgate: .*disabled/);
  await expectKeysNowhere(t, gateway, [deletedKey, disabledKey]);
});

test('invalid requests are 400 before the key is looked at, and never charged (R4)', async (t) => {
  const { gateway, keys: { working: key } } = await dialectBench(t, PAGED);
  for (const headers of [{ 'x-api-key': key }, { 'x-api-key': 'sk-not-a-key-000' }, {}] as Array<Record<string, string>>) {
    t.regex(await expectSerperError(t, await postJson(gateway.url, {}, headers), 400), /q is required/);
    t.regex(await expectSerperError(t, await postJson(gateway.url, { q: '  ' }, headers), 400), /q must not be empty or blank/);
    t.regex(await expectSerperError(t, await postJson(gateway.url, { q: 'x', num: 101 }, headers), 400), /num/);
    t.regex(await expectSerperError(t, await postJson(gateway.url, { q: 'x', page: 0 }, headers), 400), /page/);
    t.regex(await expectSerperError(t, await postJson(gateway.url, { q: 'x', tbs: 'qdr:q' }, headers), 400), /^tbs: qdr:q is not/);
    t.regex(await expectSerperError(t, await postJson(gateway.url, { q: 'x', tbs: 'cdr:1,cd_min:2/30/2024' }, headers), 400), /^tbs: cd_min 2\/30\/2024 is not a date/);
    t.regex(await expectSerperError(t, await postJson(gateway.url, { q: 'x', tbs: 'cdr:1,cd_min:3/1/2024,cd_max:2/1/2024' }, headers), 400), /after its end/);
    t.regex(await expectSerperError(t, await postJson(gateway.url, '[1]', headers), 400), /JSON object/);
  }
  const ok = await postJson(gateway.url, { q: 'x' }, { 'x-api-key': key });
  t.is(ok.headers.get('x-ratelimit-remaining'), '999');
});

test('num and page (R10): 51–100 are served as 50, page N starts at (N − 1) × num', async (t) => {
  const { gateway, upstream: { bodies: upstreamBodies } } = await dialectBench(t, PAGED);
  const page = (await (await postJson(gateway.url, { q: 'x', num: 5, page: 3 }, { 'x-api-key': TEST_KEY })).json()) as SerperResponse;
  t.deepEqual(page.organic.map((result) => result.link), PAGED_RESULTS.slice(10, 15).map((result) => result.url));
  t.deepEqual(page.organic.map((result) => result.position), [11, 12, 13, 14, 15]);
  t.is(upstreamBodies()[0]!.count, 15);
  t.like(readOf({}, { q: 'x', num: 100, page: 2 }), { count: 50, offset: 100 });
});

test('the request read: site: operators and litellm\'s wrapper (R8), tbs (R9), hl', (t) => {
  const now = Date.now();
  t.like(readOf({}, { q: '(postgres vacuum) (site:postgresql.org OR site:wiki.postgresql.org)' }), {
    query: 'postgres vacuum',
    includeDomains: ['postgresql.org', 'wiki.postgresql.org'],
    excludeDomains: [],
  });
  t.like(readOf({ q: 'vacuum -site:reddit.com' }), { query: 'vacuum', excludeDomains: ['reddit.com'] });
  for (const [tbs, raw] of [
    ['qdr:h', 'oneDay'],
    ['qdr:d', 'oneDay'],
    ['qdr:w', 'oneWeek'],
    ['qdr:m', 'oneMonth'],
    ['qdr:y', 'oneYear'],
    ['qdr:w,sbd:1', 'oneWeek'],
    ['sbd:1', 'noLimit'],
    ['cdr:1,cd_min:1/5/2024,cd_max:1/31/2024', '2024-01-05..2024-01-31'],
    ['cdr:1,cd_min:11/14/2024,cd_max:11/14/2024', '2024-11-14'],
    ['cdr:1,cd_max:12/31/1999', '1970-01-01..1999-12-31'],
  ]) {
    t.is(readOf({}, { q: 'x', tbs }).freshness.raw, raw, tbs);
  }
  // N units, and hours as the whole days that cover them (day granularity, wider than asked).
  t.is(readOf({}, { q: 'x', tbs: 'qdr:d7' }).freshness.raw, `${utcDay(now - 7 * DAY_MS)}..${utcDay(now)}`);
  t.is(readOf({}, { q: 'x', tbs: 'qdr:h48' }).freshness.raw, `${utcDay(now - 2 * DAY_MS)}..${utcDay(now)}`);
  t.is(readOf({}, { q: 'x', tbs: 'qdr:m2' }).freshness.raw, `${utcDay(now - 62 * DAY_MS)}..${utcDay(now)}`);
  t.is(readOf({}, { q: 'x', hl: 'pt_BR' }).language, 'pt-BR');
  t.is(readOf({}, { q: 'x', hl: 'iw' }).language, 'he');
  t.is(readOf({}, { q: 'x' }).language, null);
});

test('allowance exhausted and rate limited are 429 with Retry-After and X-RateLimit-Scope', async (t) => {
  const now = Date.UTC(2026, 10, 23, 12);
  const bench = await dialectBench(t, { ...PAGED, now });
  const { exhausted, limited } = await limitRefusals(t, bench, (key, q) => postJson(bench.gateway.url, { q }, { 'x-api-key': key }));
  t.regex(await expectSerperError(t, exhausted, 429), /^daily allowance exhausted/);
  t.regex(await expectSerperError(t, limited, 429), /^rate limit exceeded/);
});

for (const [query, status] of [
  ['failure', 502],
  ['unavailable', 503],
  ['timeout', 504],
] as const) {
  test(`an upstream ${query} is ${status} in Serper's shape, refunded`, async (t) => {
    const { gateway, keys: { working: key } } = await dialectBench(t, query === 'timeout' ? { ...PAGED, timeoutMs: STALL_TIMEOUT_MS } : PAGED);
    const response = await postJson(gateway.url, { q: query }, { 'x-api-key': key });
    await expectSerperError(t, response, status);
    const next = await postJson(gateway.url, { q: 'fine' }, { 'x-api-key': key });
    t.is(next.headers.get('x-ratelimit-remaining'), '999');
  });
}

test('404 under the prefix names the route; a wrong method is 405 with Allow; a body that is not JSON is 415', async (t) => {
  const { gateway } = await dialectBench(t, PAGED);
  const news = await fetch(`${gateway.url}/serper/news`, { method: 'POST', headers: { 'x-api-key': TEST_KEY } });
  t.regex(await expectSerperError(t, news, 404), /^no route for POST \/serper\/news; searchgate serves GET\|POST \/serper\/search here$/);
  const wrongMethod = await fetch(`${gateway.url}/serper/search`, { method: 'PUT', headers: { 'x-api-key': TEST_KEY } });
  await expectSerperError(t, wrongMethod, 405);
  t.regex(wrongMethod.headers.get('allow') ?? '', /POST/);
  const form = await fetch(`${gateway.url}/serper/search`, { method: 'POST', headers: { 'x-api-key': TEST_KEY, 'content-type': 'text/plain' }, body: 'q=x' });
  await expectSerperError(t, form, 415);
});

test('the embedded default: the local index answers /serper/search', async (t) => {
  const gateway = await embeddedDefaultGateway(t);
  const body = (await (await postQuery(gateway.url, 'q=vacuuming&gl=us&hl=en&num=10', { 'x-api-key': TEST_KEY })).json()) as SerperResponse;
  t.like(body.organic[0], { link: INDEXED_PAGE.url, title: INDEXED_PAGE.title, date: '2024-05-05', position: 1 });
});
