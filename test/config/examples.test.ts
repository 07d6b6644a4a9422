/**
 * The example configs in config/examples are what operators copy: each must load with the
 * environment it documents, wire the providers its comment promises, and name every variable it
 * needs when one is missing.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parse as parseYaml } from 'yaml';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { expectSearchOk } from '../helpers/faults.js';
import { REAL_LOCAL_RERANKER, startGateway } from '../helpers/gateway.js';
import { EXA_KEY, startFakeExa } from '../vendors/exa/fake.js';
import { TAVILY_KEY, startFakeTavily } from '../vendors/tavily/fake.js';

const EXAMPLES = 'config/examples';

const ENVIRONMENT: NodeJS.ProcessEnv = {
  SEARCHGATE_APP_KEY: 'sk-app-key-123',
  PRIMARY_API_KEY: 'primary-key',
  SECONDARY_URL: 'https://searchgate.internal',
  SEARXNG_URL: 'http://searxng.internal:8888',
  BRAVE_API_KEY: 'brave-key',
  JINA_API_KEY: 'jina_key',
  COHERE_API_KEY: 'cohere-key',
  EXA_API_KEY: 'exa-key',
  TAVILY_API_KEY: 'tvly-key',
  DATABASE_URL: 'postgres://searchgate@db.internal:5432/searchgate',
  REDIS_URL: 'redis://cache.internal:6379',
  INDEX_URI: 's3://search-index/prod',
};

const load = (file: string, env: NodeJS.ProcessEnv = ENVIRONMENT) => loadConfig({ ...env, SEARCHGATE_CONFIG: `${EXAMPLES}/${file}` });

test('every example config loads with its documented environment', (t) => {
  const files = readdirSync(EXAMPLES).filter((file) => file.endsWith('.yaml'));
  t.true(files.length >= 4, files.join(', '));
  for (const file of files) t.notThrows(() => load(file), file);
});

test('replicas on one object-store index: the local provider reads s3:// through a copy of its own, accounts and cache shared', (t) => {
  const config = load('replicas-object-store.yaml');
  t.like(config.providers.local, { type: 'local', directory: 's3://search-index/prod', mirror: { directory: 'data/index-mirror', pollIntervalMs: 15_000, storeTimeoutMs: 5000 } });
  t.like(load('replicas-object-store.yaml', { ...ENVIRONMENT, MIRROR_DIR: '/var/lib/searchgate/mirror' }).providers.local, { mirror: { directory: '/var/lib/searchgate/mirror' } });
  t.deepEqual(config.search.chain, ['local']);
  t.like(config, { accounts: { store: 'postgres' }, cache: { backend: 'redis' } });
});

test('SearXNG + local reranker: SearXNG first, the local index behind it, SearXNG results reranked by the embedded model', (t) => {
  const config = load('searxng-local-reranker.yaml');
  t.like(config.providers.searxng, { type: 'searxng', baseUrl: 'http://searxng.internal:8888' });
  t.deepEqual(config.search.chain, ['searxng', 'local']);
  t.deepEqual(config.search.rerank.providers, ['searxng', 'local']);
  t.is(config.search.rerank.model, 'service-reranker-v1');
  t.deepEqual(Object.keys(config.rerank.models), ['local-reranker'], 'no rerank.models: the embedded reranker serves rerank');
  t.like(loadConfig({ SEARCHGATE_CONFIG: `${EXAMPLES}/searxng-local-reranker.yaml` }).providers.searxng, { baseUrl: 'http://127.0.0.1:8888' });
});

test('Brave + Jina Reader + Cohere: one upstream per operation, each with the embedded part behind it', (t) => {
  const config = load('brave-jina-cohere.yaml');
  t.deepEqual(config.search.chain, ['brave', 'local']);
  t.deepEqual(config.content.chain, ['jina', 'local']);
  t.deepEqual(config.rerank.models['service-reranker-v1']?.chain, ['cohere', 'local-reranker']);
  t.like(config.providers, { brave: { type: 'brave', apiKey: 'brave-key' }, jina: { type: 'jina', apiKey: 'jina_key' }, cohere: { type: 'cohere', apiKey: 'cohere-key' } });
  const missing = t.throws(() => load('brave-jina-cohere.yaml', { ...ENVIRONMENT, COHERE_API_KEY: undefined }), { instanceOf: ConfigError });
  t.regex(missing!.message, /providers\.cohere\.apiKey: environment variable COHERE_API_KEY is not set/);
});

test('fused Exa + Tavily + local: a fusion fan-out whose union is reranked', (t) => {
  const config = load('fused-exa-tavily-local.yaml');
  t.is(config.search.mode, 'fusion');
  t.deepEqual(config.search.chain, ['exa', 'tavily', 'local']);
  t.like(config.search.fusion, { rerank: true, k: 60, weights: { local: 0.5 } });
  t.deepEqual(config.content.chain, ['exa', 'tavily', 'local']);
});

/**
 * The fused example end to end: its own file, with the vendors' addresses pointed at loopback fakes of
 * Exa and Tavily, an empty local index and the real embedded reranker. Exa and Tavily both know the
 * Paris page, under different addresses; the answer must hold it once, with Exa's text.
 */
test('fused Exa + Tavily + local answers end to end with fakes of both vendors and the real reranker', async (t) => {
  const exa = await startFakeExa({
    corpus: [
      { id: 'paris', url: 'https://www.paris.example/capital?utm_source=exa', title: 'Paris', score: 0.9, text: 'Paris is the capital and largest city of France.', highlights: ['Paris is the capital of France'], summary: 'Paris.' },
      { id: 'bananas', url: 'https://fruit.example/bananas', title: 'Bananas', score: 0.2, text: 'Bananas are rich in potassium.', highlights: ['Bananas are rich in potassium'], summary: 'Bananas.' },
    ],
  });
  const tavily = await startFakeTavily({
    corpus: [
      { title: 'Berlin', url: 'https://berlin.example/', content: 'Berlin is the capital of Germany.', score: 0.8, rawContent: 'Berlin is the capital and largest city of Germany.' },
      { title: 'Paris, capital of France', url: 'https://paris.example/capital', content: 'Paris has been the capital of France since 987.', score: 0.7, rawContent: 'Paris, France.' },
    ],
  });
  t.teardown(() => Promise.all([exa.close(), tavily.close()]));
  const raw = parseYaml(readFileSync(`${EXAMPLES}/fused-exa-tavily-local.yaml`, 'utf8')) as any;
  raw.providers.exa = { ...raw.providers.exa, baseUrl: exa.url, apiKey: EXA_KEY };
  raw.providers.tavily = { ...raw.providers.tavily, baseUrl: tavily.url, apiKey: TAVILY_KEY };
  raw.providers['local-reranker'] = REAL_LOCAL_RERANKER;
  const gateway = await startGateway(raw, { env: { SEARCHGATE_INDEX_DIR: mkdtempSync(join(tmpdir(), 'searchgate-example-')) } });
  t.teardown(() => gateway.close());

  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'what is the capital of france', count: 3, contents: { text: true } }));
  const value = body.data.webPages.value as Array<{ url: string; name: string; text?: string }>;
  t.is(value.filter((result) => result.url.includes('paris.example')).length, 1, 'one record for the page both vendors found');
  t.like(value[0], { name: 'Paris', text: 'Paris is the capital and largest city of France.' });
  t.deepEqual(new Set(value.map((result) => new URL(result.url).hostname)), new Set(['www.paris.example', 'berlin.example', 'fruit.example']));
  t.is(exa.requests.filter((request) => request.url === '/search').length, 1);
  t.is(tavily.requests.filter((request) => request.url === '/search').length, 1);
  const logged = gateway.logLines.map((line) => JSON.parse(line)).find((line) => line.msg === 'request');
  t.is(logged.provider, 'exa+tavily+local');
});

test('replicas on PostgreSQL and Redis: accounts in Postgres, rate windows and the shared response cache in Redis, from the environment', (t) => {
  const config = load('replicas-postgres-redis.yaml');
  t.is(config.accounts.store, 'postgres');
  t.is(config.accounts.postgres.url, 'postgres://searchgate@db.internal:5432/searchgate');
  t.deepEqual(config.accounts.redis, { url: 'redis://cache.internal:6379', keyPrefix: 'searchgate' });
  t.deepEqual(config.accounts.defaults, { dailyAllowance: 1000, ratePerSecond: 1, ratePerMinute: 60 });
  t.is(config.cache.backend, 'redis');
  t.deepEqual(config.cache.redis, { url: 'redis://cache.internal:6379', keyPrefix: 'searchgate', timeoutMs: 50, maxValueBytes: 1_048_576 });
  const missing = t.throws(() => load('replicas-postgres-redis.yaml', { ...ENVIRONMENT, REDIS_URL: undefined }), { instanceOf: ConfigError });
  t.regex(missing!.message, /accounts\.redis\.url: environment variable REDIS_URL is not set/);
});
