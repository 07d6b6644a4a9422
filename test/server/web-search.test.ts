import test from 'ava';
import { createAjv, responseValidators } from '../../src/api/validate.js';
import { searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig, type RecordedRequest } from '../helpers/gateway.js';

const validators = responseValidators(createAjv());

const PAGES = [
  { name: 'First', url: 'https://a.example/1', snippet: 'one', text: 'first page text', datePublished: '2024-03-01T10:00:00Z' },
  { name: 'Second', url: 'https://docs.b.example/2', snippet: 'two', text: 'second page text', datePublished: '2023-06-15' },
  { name: 'Third', url: 'https://c.example/3', snippet: 'three', text: 'third page text' },
];

/**
 * An upstream that honours count and text mode, and in text mode sends its snippets too (as Tavily's
 * content beside raw_content): our own text mode must still answer text instead of a snippet.
 */
async function contractUpstream(pages: Array<Record<string, unknown>> = PAGES) {
  return startUpstream((request: RecordedRequest, res) => {
    const body = request.body as { count?: number; contents?: unknown };
    const textMode = body.contents !== undefined;
    const value = pages.slice(0, body.count ?? 10).map(({ text, snippet, ...rest }) => ({ ...rest, ...(textMode ? { text, snippet } : { snippet }) }));
    sendJson(res, 200, searchEnvelope(value, { totalEstimatedMatches: 1234 }));
  });
}

async function setup(t: any, pages?: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) {
  const upstream = await contractUpstream(pages);
  const gateway = await startGateway({ ...upstreamConfig(upstream.url), cache: { enabled: false }, ...extra });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  return { upstream, gateway };
}

async function expect400(t: any, post: (body: unknown) => Promise<Response>, body: unknown, mentions: RegExp) {
  const response = await post(body);
  const json = (await response.json()) as { code: string; message: string; msg: string; log_id: string };
  t.is(response.status, 400, JSON.stringify(body));
  t.is(json.code, '400');
  t.regex(json.message, mentions);
  t.is(json.msg, json.message);
  t.true(validators.error(json));
}

test('envelope, ranked order, ids, display URLs and dates in snippet mode', async (t) => {
  const { gateway, upstream } = await setup(t);
  const response = await gateway.post('/v1/web-search', { query: 'rust async', count: 3 });
  t.is(response.status, 200);
  const body = (await response.json()) as any;
  t.true(validators.webSearch(body), JSON.stringify(validators.webSearch.errors));
  t.is(body.code, 200);
  t.regex(body.log_id, /^[0-9a-f]{32}$/);
  t.is(body.data._type, 'SearchResponse');
  t.deepEqual(body.data.queryContext, { originalQuery: 'rust async' });
  t.is(body.data.webPages.totalEstimatedMatches, 1234);
  t.false(body.data.webPages.someResultsRemoved);
  t.deepEqual(body.data.webPages.value.map((r: any) => r.url), PAGES.map((p) => p.url));
  t.deepEqual(body.data.webPages.value.map((r: any) => r.id.replace(/^.*#/, '')), ['WebPages.0', 'WebPages.1', 'WebPages.2']);
  for (const result of body.data.webPages.value) {
    t.is(typeof result.snippet, 'string');
    t.false('text' in result);
  }
  t.is(body.data.webPages.value[0].datePublished, '2024-03-01T10:00:00.000Z');
  t.is(body.data.webPages.value[1].datePublished, '2023-06-15T00:00:00.000Z');
  t.false('datePublished' in body.data.webPages.value[2]);
  // What went upstream: the request as the client meant it, with the upstream's own key.
  t.is(upstream.requests[0]!.headers.authorization, 'Bearer upstream-secret-key');
  t.deepEqual(upstream.requests[0]!.body, { query: 'rust async', count: 3, freshness: 'noLimit' });
});

test('text mode returns text instead of snippet, and the default cap is 5000', async (t) => {
  const { gateway, upstream } = await setup(t);
  for (const contents of [{ text: true }, { text: {} }, { text: { max_characters: 5000 } }]) {
    const body = (await (await gateway.post('/v1/web-search', { query: 'q', count: 2, contents })).json()) as any;
    t.true(validators.webSearch(body));
    for (const result of body.data.webPages.value) {
      t.is(typeof result.text, 'string');
      t.false('snippet' in result);
    }
    t.deepEqual(upstream.requests.at(-1)!.body.contents, { text: { max_characters: 5000 } });
  }
  const snippetMode = (await (await gateway.post('/v1/web-search', { query: 'q', contents: { text: false } })).json()) as any;
  t.is(typeof snippetMode.data.webPages.value[0].snippet, 'string');
  t.false('text' in snippetMode.data.webPages.value[0]);
});

test('text is cut at max_characters code points, never padded, and never splits a surrogate pair', async (t) => {
  const long = '😀'.repeat(10) + 'e\u0301'.repeat(10); // 10 astral + 10 (e + combining acute)
  const { gateway } = await setup(t, [
    { name: 'Long', url: 'https://l.example/', text: long },
    { name: 'Short', url: 'https://s.example/', text: 'abc' },
  ]);
  const cases: Array<[number, string]> = [
    [1, '😀'],
    [9, '😀'.repeat(9)],
    [11, '😀'.repeat(10) + 'e'],
    [12, '😀'.repeat(10) + 'e\u0301'],
    [29, long.slice(0, -1)],
    [30, long],
    [2147483647, long],
  ];
  for (const [max, expected] of cases) {
    const body = (await (await gateway.post('/v1/web-search', { query: 'q', contents: { text: { max_characters: max } } })).json()) as any;
    const [first, second] = body.data.webPages.value;
    t.is(first.text, expected, `max_characters ${max}`);
    t.true([...first.text].length <= max);
    t.false(/[\ud800-\udbff]$/.test(first.text), 'no lone high surrogate at the cut');
    t.is(second.text, max >= 3 ? 'abc' : 'abc'.slice(0, max), 'shorter text is not padded');
  }
});

test('zero results is a 200 with an empty list, and results are never padded', async (t) => {
  const { gateway } = await setup(t, []);
  const response = await gateway.post('/v1/web-search', { query: 'nothing matches', count: 50 });
  t.is(response.status, 200);
  const body = (await response.json()) as any;
  t.deepEqual(body.data.webPages.value, []);
  const one = await setup(t, [PAGES[0]!]);
  const body2 = (await (await one.gateway.post('/v1/web-search', { query: 'q', count: 10 })).json()) as any;
  t.is(body2.data.webPages.value.length, 1);
});

test('count: default 10, below 1 becomes 1, 50 accepted, 51 and non-integers rejected', async (t) => {
  const many = Array.from({ length: 60 }, (_, i) => ({ name: `P${i}`, url: `https://p.example/${i}`, snippet: `s${i}` }));
  const { gateway, upstream } = await setup(t, many);
  const sizes: Array<[unknown, number]> = [
    [undefined, 10],
    [1, 1],
    [0, 1],
    [-7, 1],
    [50, 50],
  ];
  for (const [count, expected] of sizes) {
    const body = (await (await gateway.post('/v1/web-search', count === undefined ? { query: 'q' } : { query: 'q', count })).json()) as any;
    t.is(body.data.webPages.value.length, expected, `count ${String(count)}`);
    t.is(upstream.requests.at(-1)!.body.count, expected);
  }
  const post = (body: unknown) => gateway.post('/v1/web-search', body);
  await expect400(t, post, { query: 'q', count: 51 }, /count must be <= 50/);
  await expect400(t, post, { query: 'q', count: 1000 }, /count/);
  await expect400(t, post, { query: 'q', count: 2.5 }, /count must be integer/);
  await expect400(t, post, { query: 'q', count: '5' }, /count must be integer/);
  await expect400(t, post, { query: 'q', count: null }, /count must be integer/);
});

test('query is required and must not be empty or blank', async (t) => {
  const { gateway, upstream } = await setup(t);
  const post = (body: unknown) => gateway.post('/v1/web-search', body);
  await expect400(t, post, {}, /query is required/);
  await expect400(t, post, { query: '' }, /query must not be empty/);
  await expect400(t, post, { query: '   ' }, /query must not be empty or blank/);
  await expect400(t, post, { query: 42 }, /query must be string/);
  await expect400(t, post, { query: null }, /query must be string/);
  const ok = await post({ query: 'x' });
  t.is(ok.status, 200);
  t.is(upstream.requests.length, 1, 'invalid requests never reach the upstream');
});

test('freshness: presets, real calendar dates, inclusive ranges; impossible dates and reversed ranges are 400', async (t) => {
  const { gateway, upstream } = await setup(t);
  const post = (body: unknown) => gateway.post('/v1/web-search', body);
  for (const freshness of ['noLimit', 'oneDay', 'oneWeek', 'oneMonth', 'oneYear', '2024-02-29', '2024-01-01..2024-12-31', '2024-05-05..2024-05-05']) {
    const response = await post({ query: 'q', freshness });
    t.is(response.status, 200, freshness);
    t.is(upstream.requests.at(-1)!.body.freshness, freshness);
  }
  await expect400(t, post, { query: 'q', freshness: '2023-02-29' }, /2023-02-29 is not a valid calendar date/);
  await expect400(t, post, { query: 'q', freshness: '2024-13-01' }, /2024-13-01 is not a valid calendar date/);
  await expect400(t, post, { query: 'q', freshness: '2024-04-31' }, /not a valid calendar date/);
  await expect400(t, post, { query: 'q', freshness: '2024-01-01..2023-12-31' }, /start 2024-01-01 is after its end 2023-12-31/);
  await expect400(t, post, { query: 'q', freshness: '2024-01-01..2024-02-30' }, /2024-02-30/);
  await expect400(t, post, { query: 'q', freshness: 'lastWeek' }, /freshness must be noLimit/);
  await expect400(t, post, { query: 'q', freshness: '2024-1-1' }, /freshness must be/);
  await expect400(t, post, { query: 'q', freshness: '2024-01-01..' }, /freshness must be/);
  await expect400(t, post, { query: 'q', freshness: 20240101 }, /freshness must be string/);
});

test('domain lists: arrays of non-blank strings; empty arrays mean no filter', async (t) => {
  const { gateway, upstream } = await setup(t);
  const post = (body: unknown) => gateway.post('/v1/web-search', body);
  await expect400(t, post, { query: 'q', includeDomains: [''] }, /includeDomains\[0\] must not be empty or blank/);
  await expect400(t, post, { query: 'q', excludeDomains: ['ok.example', '  '] }, /excludeDomains\[1\] must not be empty or blank/);
  await expect400(t, post, { query: 'q', includeDomains: 'a.example' }, /includeDomains must be array/);
  await expect400(t, post, { query: 'q', excludeDomains: [3] }, /excludeDomains\[0\] must be string/);
  const empty = await post({ query: 'q', includeDomains: [], excludeDomains: [] });
  t.is(empty.status, 200);
  t.is(((await empty.json()) as any).data.webPages.value.length, 3);
  t.false('includeDomains' in upstream.requests.at(-1)!.body);
  await post({ query: 'q', includeDomains: ['https://WWW.A.example/path'], excludeDomains: ['c.example'] });
  t.deepEqual(upstream.requests.at(-1)!.body.includeDomains, ['a.example']);
  t.deepEqual(upstream.requests.at(-1)!.body.excludeDomains, ['c.example']);
});

test('contents and max_characters: positive int32 only', async (t) => {
  const { gateway } = await setup(t);
  const post = (body: unknown) => gateway.post('/v1/web-search', body);
  await expect400(t, post, { query: 'q', contents: { text: { max_characters: 0 } } }, /max_characters must be >= 1/);
  await expect400(t, post, { query: 'q', contents: { text: { max_characters: -5 } } }, /max_characters must be >= 1/);
  await expect400(t, post, { query: 'q', contents: { text: { max_characters: 2147483648 } } }, /max_characters must be <= 2147483647/);
  await expect400(t, post, { query: 'q', contents: { text: { max_characters: 1.5 } } }, /max_characters must be integer/);
  await expect400(t, post, { query: 'q', contents: { text: 'yes' } }, /contents.text must be boolean or object/);
  await expect400(t, post, { query: 'q', contents: true }, /contents must be object/);
  t.is((await post({ query: 'q', contents: { text: { max_characters: 1 } } })).status, 200);
  t.is((await post({ query: 'q', contents: { text: { max_characters: 2147483647 } } })).status, 200);
});

test('unknown fields are tolerated; the legacy summary flag fills summary per result', async (t) => {
  const { gateway, upstream } = await setup(t, [
    { name: 'With', url: 'https://w.example/', snippet: 's', summary: 'Upstream summary.' },
    { name: 'Without', url: 'https://wo.example/', snippet: 'only a snippet' },
  ]);
  const plain = (await (await gateway.post('/v1/web-search', { query: 'q', futureField: { x: 1 }, stream: false })).json()) as any;
  t.is(plain.code, 200);
  t.false('summary' in plain.data.webPages.value[0]);
  const withSummary = (await (await gateway.post('/v1/web-search', { query: 'q', summary: true })).json()) as any;
  t.is(upstream.requests.at(-1)!.body.summary, true);
  t.is(withSummary.data.webPages.value[0].summary, 'Upstream summary.');
  t.is(withSummary.data.webPages.value[1].summary, 'only a snippet');
  await expect400(t, (body) => gateway.post('/v1/web-search', body), { query: 'q', summary: 'yes' }, /summary must be boolean/);
});

test('gateway filters what an upstream without native filters returns, and says it removed some', async (t) => {
  const now = Date.UTC(2025, 5, 15, 12);
  const pages = [
    { name: 'in', url: 'https://news.keep.example/a', snippet: 'a', datePublished: '2025-06-10T00:00:00Z' },
    { name: 'other domain', url: 'https://elsewhere.example/b', snippet: 'b', datePublished: '2025-06-10T00:00:00Z' },
    { name: 'too old', url: 'https://keep.example/c', snippet: 'c', datePublished: '2024-01-01T00:00:00Z' },
    { name: 'undated', url: 'https://keep.example/d', snippet: 'd' },
    { name: 'excluded sub', url: 'https://bad.keep.example/e', snippet: 'e', datePublished: '2025-06-14T00:00:00Z' },
    { name: 'in too', url: 'https://keep.example/f', snippet: 'f', datePublished: '2025-06-15T11:00:00Z' },
  ];
  const upstream = await contractUpstream(pages);
  const gateway = await startGateway({ ...upstreamConfig(upstream.url, { nativeFilters: false }), cache: { enabled: false } }, { now: () => now });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  const body = (await (
    await gateway.post('/v1/web-search', {
      query: 'q',
      count: 3,
      freshness: 'oneWeek',
      includeDomains: ['keep.example'],
      excludeDomains: ['bad.keep.example'],
    })
  ).json()) as any;
  t.deepEqual(body.data.webPages.value.map((r: any) => r.name), ['in', 'in too']);
  t.true(body.data.webPages.someResultsRemoved);
  // The upstream got no filters it would ignore, and was asked for more to make up for the ones dropped.
  const sent = upstream.requests[0]!.body;
  t.false('includeDomains' in sent);
  t.is(sent.count, 6);
});

test('a single day and a range select whole UTC days, both ends included', async (t) => {
  const pages = [
    { name: 'before', url: 'https://d.example/0', snippet: '', datePublished: '2024-05-04T23:59:59.999Z' },
    { name: 'start', url: 'https://d.example/1', snippet: '', datePublished: '2024-05-05T00:00:00Z' },
    { name: 'late', url: 'https://d.example/2', snippet: '', datePublished: '2024-05-05T23:59:59Z' },
    { name: 'next', url: 'https://d.example/3', snippet: '', datePublished: '2024-05-06T00:00:00Z' },
    { name: 'end', url: 'https://d.example/4', snippet: '', datePublished: '2024-05-07T23:59:59.999Z' },
    { name: 'after', url: 'https://d.example/5', snippet: '', datePublished: '2024-05-08T00:00:00Z' },
  ];
  const upstream = await contractUpstream(pages);
  const gateway = await startGateway({ ...upstreamConfig(upstream.url, { nativeFilters: false }), cache: { enabled: false } });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  const names = async (freshness: string) =>
    ((await (await gateway.post('/v1/web-search', { query: 'q', count: 20, freshness })).json()) as any).data.webPages.value.map((r: any) => r.name);
  t.deepEqual(await names('2024-05-05'), ['start', 'late']);
  t.deepEqual(await names('2024-05-05..2024-05-07'), ['start', 'late', 'next', 'end']);
  t.deepEqual(await names('2024-05-04..2024-05-04'), ['before']);
});

test('display URLs decode punycode and percent-escapes; names fall back to the URL', async (t) => {
  const { gateway } = await setup(t, [
    { url: 'https://xn--bcher-kva.example/%C3%A4rger?q=%E2%9C%93', snippet: 's' },
    { name: 'Bad escape', url: 'https://x.example/%E2%9C%93/%ZZ/%C3%A4', snippet: 's' },
  ]);
  const body = (await (await gateway.post('/v1/web-search', { query: 'q' })).json()) as any;
  const [first, second] = body.data.webPages.value;
  t.is(first.displayUrl, 'https://bücher.example/ärger?q=✓');
  t.is(first.url, 'https://xn--bcher-kva.example/%C3%A4rger?q=%E2%9C%93', 'url itself is untouched');
  t.is(first.name, first.displayUrl);
  t.is(second.displayUrl, 'https://x.example/✓/%ZZ/ä');
});
