/**
 * Fan-out with fusion: several real loopback upstreams queried at once, their lists merged by
 * reciprocal rank fusion, the same page under different URLs merged into one record, slow or failing
 * providers left out, and the union optionally reranked.
 */
import test, { type ExecutionContext } from 'ava';
import { dedupeKey, mergeRecords, reciprocalRankFusion } from '../../src/gateway/fusion.js';
import {
  delayed,
  expectErrorResponse,
  expectSearchOk,
  reply,
  rerankOk,
  scriptedChain,
  searchBody,
  searchOk,
  stall,
  startScriptedUpstream,
  timed,
  rawReply,
  type Fault,
} from '../helpers/faults.js';

test('dedupeKey: one page under its many addresses, different pages apart', (t) => {
  const same = [
    'https://www.Example.com/docs/page/',
    'http://example.com/docs/page',
    'https://example.com:443/docs/page?utm_source=x&utm_medium=y#intro',
    'https://example.com/docs/page?fbclid=abc',
  ];
  t.is(new Set(same.map(dedupeKey)).size, 1);
  t.not(dedupeKey('https://example.com/docs/page?id=1'), dedupeKey('https://example.com/docs/page?id=2'));
  t.is(dedupeKey('https://example.com/a?b=2&a=1'), dedupeKey('https://example.com/a?a=1&b=2'));
  t.not(dedupeKey('https://example.com/a'), dedupeKey('https://docs.example.com/a'));
  t.not(dedupeKey('https://example.com:8443/a'), dedupeKey('https://example.com/a'));
});

test('reciprocal rank fusion: agreement beats a single top rank; weights scale a list', (t) => {
  const page = (name: string) => ({ url: `https://${name}.example/`, title: name });
  const lists = [
    { provider: 'a', results: [page('solo-a'), page('shared')] },
    { provider: 'b', results: [page('solo-b'), page('shared')] },
  ];
  const fused = reciprocalRankFusion(lists, 60);
  t.deepEqual(
    fused.map(({ result }) => result.title),
    ['shared', 'solo-a', 'solo-b'],
    '2/(60+2) > 1/(60+1); ties keep the order of the lists',
  );
  t.deepEqual(fused[0]!.providers, ['a', 'b']);
  t.true(Math.abs(fused[0]!.score - 2 / 62) < 1e-12);

  const weighted = reciprocalRankFusion([{ ...lists[0]!, weight: 0 }, lists[1]!], 60);
  t.deepEqual(weighted.map(({ result }) => result.title), ['solo-b', 'shared', 'solo-a']);
  t.is(weighted.at(-1)!.score, 0);

  const repeated = reciprocalRankFusion([{ provider: 'a', results: [page('x'), page('x')] }], 60);
  t.is(repeated.length, 1);
  t.true(Math.abs(repeated[0]!.score - 1 / 61) < 1e-12, 'a page listed twice by one provider counts once');
});

test('mergeRecords keeps the better-ranked title and the fuller snippet, text and date of either', (t) => {
  const merged = mergeRecords(
    { url: 'http://example.com/a', title: 'First title', snippet: 'short', text: null, datePublished: null },
    { url: 'https://example.com/a', title: 'Second title', snippet: 'a much longer snippet', text: 'full text', datePublished: '2026-01-02' },
  );
  t.deepEqual(merged, {
    url: 'https://example.com/a',
    title: 'First title',
    snippet: 'a much longer snippet',
    text: 'full text',
    summary: null,
    datePublished: '2026-01-02',
    dateLastCrawled: null,
  });
});

/** Scripted upstreams fanned out to in fusion mode, each asked once (no retries, no cache). */
const fusedGateway = (
  t: ExecutionContext,
  scripts: Record<string, Fault[]>,
  search: Record<string, unknown> = {},
  extra: { providers?: Record<string, unknown>; rerank?: Record<string, unknown> } = {},
) =>
  scriptedChain(t, scripts, {
    provider: { timeoutMs: 5_000 },
    search: { mode: 'fusion', ...search },
    retry: { retries: 0 },
    cache: { enabled: false },
    ...extra,
  });

const EXA_LIKE = [
  { name: 'Only in A', url: 'https://a-only.example/', snippet: 'a' },
  { name: 'Shared page (A)', url: 'http://www.shared.example/doc/?utm_source=a', snippet: 'short', text: 'the full text from A' },
  { name: 'Also shared', url: 'https://both.example/x', snippet: 'x' },
];
const TAVILY_LIKE = [
  { name: 'Shared page (B)', url: 'https://shared.example/doc', snippet: 'a longer snippet from B', datePublished: '2026-03-04T05:06:07Z' },
  { name: 'Only in B', url: 'https://b-only.example/', snippet: 'b' },
  { name: 'Also shared (B)', url: 'https://both.example/x/', snippet: 'x' },
];

test('fusion merges the lists by RRF, dedupes by normalized URL and keeps the richest record', async (t) => {
  const { gateway, upstreams } = await fusedGateway(t, { a: [searchOk(EXA_LIKE)], b: [searchOk(TAVILY_LIKE)] });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', searchBody('fuse me', { count: 10 })));
  const value = body.data.webPages.value as any[];
  // shared: 1/62 + 1/61; both: 1/63 + 1/63; a-only: 1/61; b-only: 1/62.
  t.deepEqual(
    value.map((result) => result.url),
    ['https://shared.example/doc', 'https://both.example/x', 'https://a-only.example/', 'https://b-only.example/'],
  );
  t.like(value[0], { name: 'Shared page (B)', snippet: 'a longer snippet from B', datePublished: '2026-03-04T05:06:07.000Z' });
  t.is(upstreams.a!.requests.length, 1);
  t.is(upstreams.b!.requests.length, 1);
  t.is(gateway.logLines.map((line) => JSON.parse(line)).find((line) => line.msg === 'request')?.provider, 'a+b');
});

test('fusion in text mode carries the text of whichever source had it', async (t) => {
  const { gateway } = await fusedGateway(t, { a: [searchOk(EXA_LIKE)], b: [searchOk(TAVILY_LIKE)] });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', searchBody('fuse me', { contents: { text: true } })));
  const shared = (body.data.webPages.value as any[]).find((result) => result.url === 'https://shared.example/doc');
  t.like(shared, { text: 'the full text from A', datePublished: '2026-03-04T05:06:07.000Z' });
  t.false('snippet' in shared);
});

test('count cuts the fused list; weights from the config apply', async (t) => {
  const { gateway } = await fusedGateway(t, { a: [searchOk(EXA_LIKE)], b: [searchOk(TAVILY_LIKE)] }, { fusion: { weights: { b: 0 } } });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', searchBody('q', { count: 2 })));
  // B weighs nothing: A's order stands (a-only 1/61, shared 1/62, both 1/63), where equal weights put shared first.
  t.deepEqual(
    body.data.webPages.value.map((result) => result.url),
    ['https://a-only.example/', 'https://shared.example/doc'],
  );
});

test('a failing or slow provider is left out; the others still answer within the fan-out timeout', async (t) => {
  const { gateway } = await fusedGateway(
    t,
    { a: [searchOk(EXA_LIKE)], broken: [reply(500, { message: 'down' })], slow: [stall()] },
    { fusion: { timeoutMs: 400 } },
  );
  const { value: response, ms } = await timed(() => gateway.post('/v1/web-search', searchBody('q')));
  const body = await expectSearchOk(t, response);
  t.deepEqual(body.data.webPages.value.map((result) => result.name), EXA_LIKE.map((result) => result.name));
  t.true(ms >= 350 && ms < 3_000, `answered after ${ms} ms`);
});

test('fusion fails only when every provider does, with the status their failures call for', async (t) => {
  const throttled = await fusedGateway(t, {
    a: [reply(429, { message: 'slow down' }, { 'Retry-After': '12' })],
    b: [reply(429, { message: 'slow down' }, { 'Retry-After': '20' })],
  });
  const limited = await throttled.gateway.post('/v1/web-search', searchBody('q'));
  t.is(limited.headers.get('retry-after'), '12');
  await expectErrorResponse(t, throttled.gateway, limited, 503);

  const broken = await fusedGateway(t, { a: [reply(500, {})], b: [rawReply(200, 'not json', 'application/json')] });
  await expectErrorResponse(t, broken.gateway, await broken.gateway.post('/v1/web-search', searchBody('q')), 502);

  const slow = await fusedGateway(t, { a: [stall()], b: [delayed(2_000, searchOk())] }, { fusion: { timeoutMs: 300 } });
  await expectErrorResponse(t, slow.gateway, await slow.gateway.post('/v1/web-search', searchBody('q')), 504);
});

test('fusion.rerank orders the fused union by the rerank model before the cut', async (t) => {
  // This judge scores documents by position: the last one it is sent scores best.
  const judge = await startScriptedUpstream([rerankOk()]);
  t.teardown(() => judge.close());
  const { gateway } = await fusedGateway(
    t,
    { a: [searchOk(EXA_LIKE)], b: [searchOk(TAVILY_LIKE)] },
    { fusion: { rerank: true }, rerank: { model: 'judge', candidates: 20 } },
    {
      providers: { judge: { type: 'searchgate-compatible', baseUrl: judge.url } },
      rerank: { models: { judge: { chain: ['judge'] } } },
    },
  );
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', searchBody('q', { count: 3 })));
  t.deepEqual(judge.requests[0]!.body.documents, [
    'Shared page (B)\na longer snippet from B',
    'Also shared\nx',
    'Only in A\na',
    'Only in B\nb',
  ], 'the judge saw the deduplicated union in RRF order, title and snippet');
  t.deepEqual(
    body.data.webPages.value.map((result) => result.name),
    ['Only in B', 'Only in A', 'Also shared'],
  );
});
