/**
 * The response cache shared by replicas through Redis (cache.backend: redis): in-process gateways
 * run one config, so one config fingerprint and one key space, against the real Redis under a fresh
 * key prefix per test, and a loopback upstream that counts the calls it gets.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import test, { type ExecutionContext } from 'ava';
import { Redis } from 'ioredis';
import { REDIS_URL } from '../helpers/databases.js';
import { eventually, metricValue } from '../helpers/faults.js';
import { searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig, type RunningGateway } from '../helpers/gateway.js';
import { deadPort, startTcpProxy } from '../helpers/tcp-proxy.js';
import { pageTextType } from '../helpers/test-providers.js';

const redis = new Redis(REDIS_URL);
test.after.always(() => redis.quit());

interface ReplicaOptions {
  /** One Redis URL per replica (its count is the number of replicas). */
  redisUrls?: string[];
  redis?: Record<string, unknown>;
  ttlSeconds?: Record<string, number>;
}

async function replicas(t: ExecutionContext, { redisUrls = [REDIS_URL, REDIS_URL], redis: redisOptions = {}, ttlSeconds = {} }: ReplicaOptions = {}) {
  const keyPrefix = `sgtest-${randomBytes(6).toString('hex')}`;
  const upstream = await startUpstream((request, res) => {
    if (request.url === '/v1/web-search') {
      const query = (request.body as { query: string }).query;
      return sendJson(res, 200, searchEnvelope([{ url: 'https://a.example/', name: 'A', snippet: `${query} ${'x'.repeat(500)}` }]));
    }
    if (request.url === '/v1/rerank') {
      const documents = (request.body as { documents: string[] }).documents;
      return sendJson(res, 200, { code: 200, results: documents.map((_, index) => ({ index, relevance_score: 1 / (index + 1) })) });
    }
    return sendJson(res, 200, { text: `the text of ${new URL(request.url, 'http://upstream').searchParams.get('url')}` });
  });
  // Replicas of one deployment run one config file: the account file's path is part of it too.
  const stateDirectory = mkdtempSync(join(tmpdir(), 'searchgate-replicas-'));
  const gateways: RunningGateway[] = [];
  for (const url of redisUrls) {
    const base = upstreamConfig(upstream.url);
    const config = {
      ...base,
      providers: { ...base.providers, pages: { type: 'page-text', baseUrl: upstream.url } },
      content: { chain: ['pages'] },
      accounts: { embedded: { path: join(stateDirectory, 'accounts.db') } },
      // A deadline far above Redis's answer time, so that only the test of the deadline sees one pass on a busy host.
      cache: { enabled: true, backend: 'redis', ttlSeconds, redis: { url, keyPrefix, timeoutMs: 2000, ...redisOptions } },
    };
    gateways.push(await startGateway(config, { providerTypes: { 'page-text': pageTextType } }));
  }
  t.teardown(async () => {
    for (const gateway of gateways) await gateway.close();
    await upstream.close();
    rmSync(stateDirectory, { recursive: true, force: true });
    const keys = await redis.keys(`${keyPrefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
  });
  const callsTo = (path: string) => upstream.requests.filter((request) => request.url.startsWith(path)).length;
  const storedKeys = () => redis.keys(`${keyPrefix}:*`);
  /**
   * Asks the first replica, then the second the same once the first's answer is in Redis (it is
   * stored without the request waiting): a MISS, then a HIT. Returns both bodies, made comparable.
   */
  async function missThenSharedHit(path: string, body: unknown) {
    const [a, b] = gateways as [RunningGateway, RunningGateway];
    const storedBefore = (await storedKeys()).length;
    const first = await a.post(path, body);
    t.is(cacheOf(first), 'MISS');
    await eventually(async () => (await storedKeys()).length > storedBefore);
    const second = await b.post(path, body);
    t.is(cacheOf(second), 'HIT');
    return { first: await comparable(first, a), second: await comparable(second, b) };
  }
  return { gateways, keyPrefix, callsTo, storedKeys, missThenSharedHit };
}

/** A body with what differs per request and replica taken out: the log_id (Cohere's id repeats it), and the origin in result ids. */
async function comparable(response: Response, replica: RunningGateway) {
  const body = JSON.parse((await response.text()).replaceAll(new URL(replica.url).host, 'replica'));
  if (body.id === body.log_id) delete body.id;
  delete body.log_id;
  return body;
}

const cacheOf = (response: Response) => response.headers.get('x-cache');

test('a search one replica answered is a HIT on the other, with the same body and no upstream call', async (t) => {
  const { gateways: [a, b], callsTo, storedKeys, missThenSharedHit } = await replicas(t);
  const request = { query: 'shared across replicas', count: 3 };
  const { first, second } = await missThenSharedHit('/v1/web-search', request);
  t.deepEqual(second, first);
  t.is(callsTo('/v1/web-search'), 1);
  t.is(await metricValue(a!, 'searchgate_cache_misses_total', { cache: 'search' }), 1);
  t.is(await metricValue(b!, 'searchgate_cache_hits_total', { cache: 'search' }), 1);
  t.is(await metricValue(b!, 'searchgate_cache_misses_total', { cache: 'search' }), 0);

  // B keeps what it read in its memory cache, as one object: it still answers with Redis emptied.
  await redis.del(...(await storedKeys()));
  const third = await b!.post('/v1/web-search', request);
  t.is(cacheOf(third), 'HIT');
  t.deepEqual(await comparable(third, b!), await comparable(await a!.post('/v1/web-search', request), a!));
  t.is(callsTo('/v1/web-search'), 1);
  for (const replica of [a!, b!]) t.is(await metricValue(replica, 'searchgate_cache_backend_errors_total'), 0);
});

test('rerank answers and content pages are shared too', async (t) => {
  const { gateways: [, b], callsTo, missThenSharedHit } = await replicas(t);
  const ranked = await missThenSharedHit('/v1/rerank', { query: 'q', documents: ['a', 'b', 'c'], top_n: 2, return_documents: true });
  t.deepEqual(ranked.second, ranked.first);
  t.is(callsTo('/v1/rerank'), 1);

  // Tavily's extract body carries the request's own timing and id: the pages are what must match.
  const page = await missThenSharedHit('/tavily/extract', { urls: ['https://page.example/one'] });
  t.is(page.second.results[0].raw_content, 'the text of https://page.example/one');
  t.deepEqual(page.second.results, page.first.results);
  t.is(callsTo('/text'), 1);
  t.is(await metricValue(b!, 'searchgate_cache_hits_total'), 2);
});

test('entries are stored under the prefix and the config fingerprint with the answer\'s TTL, and expire on the replica that read them with Redis', async (t) => {
  const { gateways: [a, b], keyPrefix, callsTo, storedKeys } = await replicas(t, { ttlSeconds: { noLimit: 3, oneDay: 300 } });
  t.is(cacheOf(await a!.post('/v1/web-search', { query: 'ttl' })), 'MISS');
  const written = Date.now();
  t.is(cacheOf(await a!.post('/v1/web-search', { query: 'ttl', freshness: 'oneDay' })), 'MISS');
  await eventually(async () => (await storedKeys()).length === 2);
  const keys = await redis.keys(`${keyPrefix}:cache:${a!.config.version}:search:*`);
  t.is(keys.length, 2, 'both searches, under the config fingerprint');
  const ttls = (await Promise.all(keys.map((key) => redis.pttl(key)))).sort((x, y) => x - y);
  t.true(ttls[0]! > 0 && ttls[0]! <= 3000, `noLimit: ${ttls[0]} ms`);
  t.true(ttls[1]! > 3000 && ttls[1]! <= 300_000, `oneDay: ${ttls[1]} ms`);

  // Halfway through the entry's life B reads it; it keeps it for what is left, not for 3 s again.
  await delay(1500 - (Date.now() - written));
  t.is(cacheOf(await b!.post('/v1/web-search', { query: 'ttl' })), 'HIT');
  await delay(3300 - (Date.now() - written));
  t.is(cacheOf(await b!.post('/v1/web-search', { query: 'ttl' })), 'MISS', 'expired on B as in Redis');
  t.is(cacheOf(await b!.post('/v1/web-search', { query: 'ttl', freshness: 'oneDay' })), 'HIT', 'the oneDay entry lives on');
  t.is(callsTo('/v1/web-search'), 3);
});

test('an answer larger than cache.redis.maxValueBytes stays in the memory cache of the replica that loaded it', async (t) => {
  const { gateways: [a, b], callsTo, storedKeys } = await replicas(t, { redis: { maxValueBytes: 300 } });
  t.is(cacheOf(await a!.post('/v1/web-search', { query: 'large' })), 'MISS');
  t.is(cacheOf(await a!.post('/v1/web-search', { query: 'large' })), 'HIT');
  t.is(cacheOf(await b!.post('/v1/web-search', { query: 'large' })), 'MISS');
  t.deepEqual(await storedKeys(), []);
  t.is(callsTo('/v1/web-search'), 2);
});

test('with Redis unreachable from the start, requests are answered and cached locally, the errors counted and logged once', async (t) => {
  const { gateways: [gateway], callsTo } = await replicas(t, { redisUrls: [`redis://127.0.0.1:${await deadPort()}`] });
  for (const query of ['one', 'two']) {
    const miss = await gateway!.post('/v1/web-search', { query });
    t.is(miss.status, 200);
    t.is(cacheOf(miss), 'MISS');
    const hit = await gateway!.post('/v1/web-search', { query });
    t.is(hit.status, 200);
    t.is(cacheOf(hit), 'HIT', 'the memory cache still serves');
  }
  t.is(callsTo('/v1/web-search'), 2);
  t.is(await metricValue(gateway!, 'searchgate_cache_backend_errors_total', { cache: 'search', operation: 'get' }), 2);
  t.is(await metricValue(gateway!, 'searchgate_cache_backend_errors_total', { cache: 'search', operation: 'set' }), 2);
  const warnings = gateway!.logLines.filter((line) => line.includes('shared cache unavailable'));
  t.is(warnings.length, 1, 'one warning for the whole outage so far');
});

test('an outage in the middle: both replicas keep answering from their own memory, and share again once Redis is back', async (t) => {
  t.timeout(30_000);
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(REDIS_URL).port || 6379) });
  t.teardown(() => proxy.close());
  const { gateways: [a, b], callsTo, missThenSharedHit } = await replicas(t, { redisUrls: [proxy.url, proxy.url] });
  await missThenSharedHit('/v1/web-search', { query: 'before' });

  proxy.setMode('refuse');
  for (const replica of [a!, b!]) {
    const answer = await replica.post('/v1/web-search', { query: 'during' });
    t.is(answer.status, 200);
    t.is(cacheOf(answer), 'MISS', 'nothing shared while Redis is away');
    t.is(cacheOf(await replica.post('/v1/web-search', { query: 'before' })), 'HIT', 'what it had stays');
    t.true((await metricValue(replica, 'searchgate_cache_backend_errors_total', { cache: 'search', operation: 'get' })) >= 1);
  }
  t.is(callsTo('/v1/web-search'), 3);

  proxy.setMode('forward');
  // ioredis reconnects on its own (within a second here): a new query A answers becomes a HIT on B.
  let shared = false;
  for (let attempt = 0; attempt < 100 && !shared; attempt++) {
    const request = { query: `after ${attempt}` };
    await a!.post('/v1/web-search', request);
    await delay(50);
    shared = cacheOf(await b!.post('/v1/web-search', request)) === 'HIT';
  }
  t.true(shared, 'B read what A stored once Redis was back');
});

test('a Redis that stops answering costs a request no more than cache.redis.timeoutMs: it is answered, and the error counted', async (t) => {
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(REDIS_URL).port || 6379) });
  t.teardown(() => proxy.close());
  const { gateways: [gateway] } = await replicas(t, { redisUrls: [proxy.url], redis: { timeoutMs: 50 } });
  proxy.setMode('stall');
  const answer = await gateway!.post('/v1/web-search', { query: 'stalled' });
  t.is(answer.status, 200);
  t.is(cacheOf(answer), 'MISS');
  t.is(await metricValue(gateway!, 'searchgate_cache_backend_errors_total', { cache: 'search', operation: 'get' }), 1);
  // The deadline ended the wait, not the connection: the warning says the command timed out.
  const warning = gateway!.logLines.find((line) => line.includes('shared cache unavailable'));
  t.regex(warning ?? '', /"reason":"Command timed out"/);
  proxy.setMode('forward');
});
