import test from 'ava';
import { searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig } from '../helpers/gateway.js';

async function setup(t: any, cache: Record<string, unknown>, now?: () => number) {
  const upstream = await startUpstream((request, res) =>
    sendJson(res, 200, searchEnvelope([{ url: 'https://a.example/', name: 'A', snippet: `${(request.body as any).query} ${'x'.repeat(500)}` }])),
  );
  const gateway = await startGateway({ ...upstreamConfig(upstream.url), cache }, now ? { now } : {});
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  return { gateway, upstream };
}

const cacheStatus = async (gateway: Awaited<ReturnType<typeof setup>>['gateway'], body: Record<string, unknown>) =>
  (await gateway.post('/v1/web-search', body)).headers.get('x-cache');

test('the key covers every field that changes the answer, and nothing else', async (t) => {
  const { gateway, upstream } = await setup(t, { enabled: true });
  const base = { query: 'q', count: 5 };
  t.is(await cacheStatus(gateway, base), 'MISS');
  t.is(await cacheStatus(gateway, { ...base, unknownField: 1 }), 'HIT', 'unknown fields do not split the cache');
  t.is(await cacheStatus(gateway, { ...base, includeDomains: [] }), 'HIT', 'an empty filter is no filter');
  for (const variant of [
    { query: 'Q', count: 5 },
    { ...base, count: 6 },
    { ...base, freshness: 'oneDay' },
    { ...base, includeDomains: ['a.example'] },
    { ...base, excludeDomains: ['a.example'] },
    { ...base, contents: { text: true } },
    { ...base, contents: { text: { max_characters: 10 } } },
    { ...base, summary: true },
  ]) {
    t.is(await cacheStatus(gateway, variant), 'MISS', JSON.stringify(variant));
    t.is(await cacheStatus(gateway, variant), 'HIT', JSON.stringify(variant));
  }
  t.is(await cacheStatus(gateway, { ...base, includeDomains: ['b.example', 'a.example'] }), 'MISS');
  t.is(await cacheStatus(gateway, { ...base, includeDomains: ['a.example', 'b.example'] }), 'HIT', 'domain order does not matter');
  t.is(upstream.requests.length, 10);
});

test('entries expire after their freshness-class TTL', async (t) => {
  const { gateway, upstream } = await setup(t, { enabled: true, ttlSeconds: { noLimit: 1, oneDay: 30 } });
  t.is(await cacheStatus(gateway, { query: 'ttl' }), 'MISS');
  t.is(await cacheStatus(gateway, { query: 'ttl', freshness: 'oneDay' }), 'MISS');
  t.is(await cacheStatus(gateway, { query: 'ttl' }), 'HIT');
  await new Promise((resolve) => setTimeout(resolve, 1100));
  t.is(await cacheStatus(gateway, { query: 'ttl' }), 'MISS', 'noLimit entry expired after 1 s');
  t.is(await cacheStatus(gateway, { query: 'ttl', freshness: 'oneDay' }), 'HIT', 'oneDay entry lives 30 s');
  t.is(upstream.requests.length, 3);
});

test('the cache stays within its byte bound, evicting the least recently used', async (t) => {
  const { gateway } = await setup(t, { enabled: true, maxBytes: 3000 });
  for (let i = 0; i < 10; i++) t.is(await cacheStatus(gateway, { query: `q${i}` }), 'MISS');
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  const bytes = Number(/^searchgate_cache_size_bytes\{cache="search"\} (\d+)/m.exec(metrics)![1]);
  const entries = Number(/^searchgate_cache_entries\{cache="search"\} (\d+)/m.exec(metrics)![1]);
  t.true(bytes > 0 && bytes <= 3000, `${bytes} bytes`);
  t.true(entries >= 1 && entries < 10, `${entries} entries`);
  t.is(await cacheStatus(gateway, { query: 'q9' }), 'HIT', 'the newest is kept');
  t.is(await cacheStatus(gateway, { query: 'q0' }), 'MISS', 'the oldest was evicted');
});

test('caching can be switched off', async (t) => {
  const { gateway, upstream } = await setup(t, { enabled: false });
  t.is(await cacheStatus(gateway, { query: 'off' }), 'BYPASS');
  t.is(await cacheStatus(gateway, { query: 'off' }), 'BYPASS');
  t.is(upstream.requests.length, 2);
});

test('rerank answers are cached too, whatever top_n and return_documents ask for', async (t) => {
  const upstream = await startUpstream((request, res) =>
    sendJson(res, 200, { code: 200, results: (request.body as any).documents.map((_: string, index: number) => ({ index, relevance_score: 1 / (index + 1) })) }),
  );
  const gateway = await startGateway(upstreamConfig(upstream.url));
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  const ask = (extra: Record<string, unknown>) => gateway.post('/v1/rerank', { query: 'q', documents: ['a', 'b', 'c'], ...extra });
  t.is((await ask({})).headers.get('x-cache'), 'MISS');
  const cut = await ask({ top_n: 1, return_documents: true });
  t.is(cut.headers.get('x-cache'), 'HIT');
  t.deepEqual(((await cut.json()) as any).results, [{ index: 0, relevance_score: 1, rerankScore: 1, document: { text: 'a' } }]);
  t.is((await ask({ documents: ['a', 'b', 'd'] })).headers.get('x-cache'), 'MISS');
  t.is(upstream.requests.length, 2);
});
