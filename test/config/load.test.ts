import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { ConfigError, loadConfig, resolveConfig } from '../../src/config/load.js';

const provider = { type: 'searchgate-compatible', baseUrl: 'http://127.0.0.1:9' };

test('an empty config is valid and fills every default', (t) => {
  const config = resolveConfig({}, {});
  t.is(config.server.port, 8080);
  t.is(config.server.requestTimeoutMs, 20_000);
  t.like(config.server, {
    firstRequestTimeoutMs: 10_000,
    headersTimeoutMs: 15_000,
    bodyTimeoutMs: 25_000,
    keepAliveTimeoutMs: 20_000,
    maxHeaderBytes: 16_384,
    maxConnections: 1_024,
  });
  t.is(config.rerank.defaultModel, undefined, 'service-reranker-v1 then means the first configured model');
  t.is(config.rerank.maxDocuments, 1000);
  t.true(config.cache.enabled);
  t.is(config.cache.backend, 'memory');
  t.is(config.cache.redis, undefined);
  t.deepEqual(config.search.chain, ['local'], 'the embedded default serves web-search');
  t.deepEqual(config.content.chain, ['local']);
  t.like(config.providers.local, { type: 'local', directory: 'data/index' });
  t.regex(config.version, /^[0-9a-f]{16}$/);
});

const invalid: Array<[string, unknown, RegExp]> = [
  ['wrong type', { server: { port: 'eighty' } }, /config key server\.port must be integer/],
  ['out of range', { server: { port: 70000 } }, /config key server\.port must be <= 65535/],
  ['unknown key', { cache: { enabld: true } }, /config key cache\.enabld is not a known setting/],
  ['unknown top-level key', { serch: {} }, /config key serch is not a known setting/],
  ['unknown provider type', { providers: { x: { type: 'altavista' } } }, /config key providers\.x\.type: unknown provider type "altavista"/],
  ['provider option missing', { providers: { x: { type: 'searchgate-compatible' } } }, /config key providers\.x\.baseUrl is required/],
  ['provider option invalid', { providers: { x: { ...provider, baseUrl: 'ftp://x' } } }, /config key providers\.x\.baseUrl must match pattern/],
  ['provider option unknown', { providers: { x: { ...provider, apikey: 'k' } } }, /config key providers\.x\.apikey is not a known setting/],
  ['chain names a missing provider', { search: { chain: ['ghost'] } }, /config key search\.chain\[0\]: no provider named "ghost"/],
  ['rerank chain names a missing provider', { rerank: { models: { m: { chain: ['ghost'] } } } }, /config key rerank\.models\.m\.chain\[0\]/],
  ['placeholder key', { auth: { keys: [{ key: 'YOUR_API_KEY' }] } }, /auth\.keys\[0\]\.key is the placeholder/],
  ['body timeout below the headers timeout', { server: { headersTimeoutMs: 5000, bodyTimeoutMs: 4000 } }, /server\.bodyTimeoutMs must not be below server\.headersTimeoutMs/],
  ['short key', { auth: { keys: [{ key: 'short' }] } }, /config key auth\.keys\[0\]\.key must match pattern/],
  ['redis cache without Redis', { cache: { backend: 'redis' } }, /config key cache\.redis\.url is required when cache\.backend is redis/],
  ['unknown cache backend', { cache: { backend: 'memcached' } }, /config key cache\.backend must be equal to one of the allowed values/],
];

for (const [name, raw, message] of invalid) {
  test(`a bad config names the key: ${name}`, (t) => {
    const error = t.throws(() => resolveConfig(raw, {}), { instanceOf: ConfigError });
    t.regex(error!.message, message);
  });
}

test('${ENV} and ${ENV:-fallback} interpolation; a missing variable names the key', (t) => {
  const raw = {
    providers: { up: { ...provider, baseUrl: '${UP_URL:-http://127.0.0.1:1}', apiKey: '${UP_KEY}' } },
    search: { chain: ['up'] },
  };
  const config = resolveConfig(raw, { UP_KEY: 'secret-from-env' });
  t.is(config.providers.up!.apiKey, 'secret-from-env');
  t.is(config.providers.up!.baseUrl, 'http://127.0.0.1:1');
  t.is(resolveConfig(raw, { UP_KEY: 'k', UP_URL: 'https://x.example' }).providers.up!.baseUrl, 'https://x.example');
  const error = t.throws(() => resolveConfig(raw, {}), { instanceOf: ConfigError });
  t.is(error!.message, 'config key providers.up.apiKey: environment variable UP_KEY is not set');
});

test('the config version changes with the config, so cached answers never outlive a change', (t) => {
  const a = resolveConfig({ providers: { up: provider }, search: { chain: ['up'] } }, {});
  const b = resolveConfig({ providers: { up: { ...provider, maxPageSize: 10 } }, search: { chain: ['up'] } }, {});
  t.not(a.version, b.version);
  t.is(a.version, resolveConfig({ providers: { up: provider }, search: { chain: ['up'] } }, {}).version);
  t.not(a.version, resolveConfig({ providers: { up: provider }, search: { chain: ['up'] }, cache: { ttlSeconds: { noLimit: 60 } } }, {}).version);
});

test('the config version leaves out what is one replica\'s own, so replicas that differ there share cached answers', (t) => {
  const shared = { providers: { up: provider }, search: { chain: ['up'] } };
  const a = resolveConfig({ ...shared, server: { port: 8081 }, logging: { level: 'debug' }, accounts: { embedded: { path: '/tmp/a.db' } } }, {});
  const b = resolveConfig({ ...shared, server: { port: 8082 }, logging: { level: 'warn' }, accounts: { embedded: { path: '/tmp/b.db' } }, cache: { maxBytes: 1024 } }, {});
  t.is(a.version, b.version);
});

test('loadConfig reads YAML and JSON files and reports unreadable or unparsable ones', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'searchgate-config-'));
  writeFileSync(join(dir, 'ok.yaml'), 'server:\n  port: 9999\n');
  writeFileSync(join(dir, 'ok.json'), '{"server": {"port": 9998}}');
  writeFileSync(join(dir, 'bad.yaml'), 'server: [unclosed\n');
  t.is(loadConfig({ SEARCHGATE_CONFIG: join(dir, 'ok.yaml') }).server.port, 9999);
  t.is(loadConfig({ SEARCHGATE_CONFIG: join(dir, 'ok.json') }).server.port, 9998);
  t.throws(() => loadConfig({ SEARCHGATE_CONFIG: join(dir, 'missing.yaml') }), { message: /cannot read config file .*missing\.yaml: ENOENT/ });
  t.throws(() => loadConfig({ SEARCHGATE_CONFIG: join(dir, 'bad.yaml') }), { message: /is not valid YAML/ });
});

test('the shipped config files are valid', (t) => {
  t.notThrows(() => loadConfig({ SEARCHGATE_CONFIG: 'config/default.yaml' }));
  t.notThrows(() =>
    loadConfig({
      SEARCHGATE_CONFIG: 'config/examples/upstream-searchgate.yaml',
      SEARCHGATE_APP_KEY: 'sk-app-key-123',
      PRIMARY_API_KEY: 'k1',
      SECONDARY_URL: 'https://searchgate.internal',
    }),
  );
});

test('rerank.defaultModel must name a configured model', (t) => {
  const error = t.throws(
    () => resolveConfig({ providers: { up: provider }, rerank: { defaultModel: 'ghost', models: { real: { chain: ['up'] } } } }, {}),
    { instanceOf: ConfigError },
  );
  t.regex(error!.message, /config key rerank\.defaultModel: no model named "ghost"/);
});
