/**
 * Account keys, allowances and rate limits over real HTTP, against the real embedded SQLite store,
 * with an injected clock.
 */
import test, { type ExecutionContext } from 'ava';
import { newApiKey } from '../../src/state/accounts.js';
import type { NewAccount } from '../../src/state/store.js';
import { expectErrorResponse, metricValue } from '../helpers/faults.js';
import { TEST_KEY, searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig } from '../helpers/gateway.js';

const NOON = Date.UTC(2026, 10, 23, 12, 0, 0);
const MIDNIGHT = Date.UTC(2026, 10, 24);

async function setup(t: ExecutionContext, accounts: Record<string, unknown> = {}, account: Partial<NewAccount> = {}) {
  const clock = { now: NOON };
  const upstream = await startUpstream((request, res) =>
    request.body?.query === 'fail' ? sendJson(res, 500, { code: 500, msg: 'boom' }) : sendJson(res, 200, searchEnvelope([])),
  );
  const gateway = await startGateway(
    { ...upstreamConfig(upstream.url), retry: { retries: 0 }, accounts: { defaults: { ratePerSecond: 0, ratePerMinute: 0 }, ...accounts } },
    { now: () => clock.now },
  );
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  const { accounts: service } = gateway.gateway.services;
  const created = await service.store.createAccount({ name: 'acme', ...account }, clock.now);
  const { key, record } = await service.createKey(created.id, 'ci');
  const search = (query = 'q', bearer = key) => gateway.post('/v1/web-search', { query }, { authorization: `Bearer ${bearer}` });
  return { clock, gateway, upstream, service, account: created, key, record, search };
}

test('a stored key authenticates, and every answer carries the daily allowance headers', async (t) => {
  const { search, clock } = await setup(t, {}, { dailyAllowance: 5 });
  const first = await search('one');
  t.is(first.status, 200);
  t.is(first.headers.get('x-ratelimit-limit'), '5');
  t.is(first.headers.get('x-ratelimit-remaining'), '4');
  t.is(first.headers.get('x-ratelimit-reset'), String(MIDNIGHT / 1000));
  clock.now += 5000;
  const second = await search('two');
  t.is(second.headers.get('x-ratelimit-remaining'), '3');
});

test('the 401 cases of spec §5.6 against stored keys: wrong secret, unknown id, whitespace, deleted', async (t) => {
  const { search, key, record, service, upstream, gateway } = await setup(t);
  const wrongSecret = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
  const unknownId = newApiKey().key;
  for (const [bearer, expected] of [
    [wrongSecret, /^invalid API key$/],
    [unknownId, /^invalid API key$/],
    [`${key.slice(0, 20)} ${key.slice(20)}`, /malformed Authorization header/],
    [key.slice(0, 15), /^invalid API key$/],
  ] as const) {
    const { message } = await expectErrorResponse(t, gateway, await search('q', bearer), 401);
    t.regex(message, expected, bearer);
  }
  t.true(await service.store.deleteKey(record.id, Date.now()));
  const deleted = await search('q');
  t.is(deleted.headers.get('www-authenticate'), 'Bearer realm="searchgate"');
  const { message } = await expectErrorResponse(t, gateway, deleted, 401);
  t.regex(message, new RegExp(`API key sg_${record.id}… has been deleted`));
  t.is(upstream.requests.length, 0);
});

test('rotation: a second key works beside the first, and deleting the first leaves the second working', async (t) => {
  const { search, key, record, service, account } = await setup(t);
  const replacement = await service.createKey(account.id, 'replacement');
  t.is((await search('a', replacement.key)).status, 200);
  await service.store.deleteKey(record.id, Date.now());
  t.is((await search('b', key)).status, 401);
  t.is((await search('c', replacement.key)).status, 200);
});

test('a disabled account is refused with 403, before any charge; enabling it again lets it in', async (t) => {
  const { search, service, account, gateway } = await setup(t, {}, { dailyAllowance: 10 });
  await service.store.updateAccount(account.id, { status: 'disabled' });
  const { message } = await expectErrorResponse(t, gateway, await search(), 403);
  t.regex(message, /account "acme" is disabled/);
  await service.store.updateAccount(account.id, { status: 'active' });
  const allowed = await search();
  t.is(allowed.status, 200);
  t.is(allowed.headers.get('x-ratelimit-remaining'), '9', 'the refused request was not charged');
});

test('the per-second rate limit answers 429 naming the rate limit, with Retry-After, and the refusal is not charged', async (t) => {
  const { search, clock, gateway } = await setup(t, {}, { ratePerSecond: 2, dailyAllowance: 100 });
  clock.now = NOON + 250;
  t.is((await search('a')).status, 200);
  t.is((await search('b')).status, 200);
  const refused = await search('c');
  t.is(refused.headers.get('retry-after'), '1');
  t.is(refused.headers.get('x-ratelimit-scope'), 'second');
  t.is(refused.headers.get('x-ratelimit-remaining'), '98');
  const { message } = await expectErrorResponse(t, gateway, refused, 429);
  t.regex(message, /^rate limit exceeded: this account may make 2 requests per second/);
  t.regex(message, /the daily allowance is not exhausted: 98 of 100 left today/);
  clock.now = NOON + 1000;
  const next = await search('d');
  t.is(next.status, 200, 'a new second admits again');
  t.is(next.headers.get('x-ratelimit-remaining'), '97');
});

test('the per-minute rate limit answers 429 with the wait until the minute ends', async (t) => {
  const { search, clock, gateway } = await setup(t, {}, { ratePerMinute: 3 });
  for (let i = 0; i < 3; i++) {
    clock.now = NOON + i * 1000;
    t.is((await search(`q${i}`)).status, 200);
  }
  clock.now = NOON + 20_000;
  const refused = await search('q4');
  t.is(refused.headers.get('retry-after'), '40');
  t.is(refused.headers.get('x-ratelimit-scope'), 'minute');
  t.regex((await expectErrorResponse(t, gateway, refused, 429)).message, /3 requests per minute/);
  clock.now = NOON + 60_000;
  t.is((await search('q5')).status, 200);
});

test('refusals are counted on /metrics by the limit that was hit', async (t) => {
  const { search, clock, gateway } = await setup(t, {}, { ratePerSecond: 1, dailyAllowance: 2 });
  t.is((await search('a')).status, 200);
  t.is((await search('b')).status, 429);
  clock.now += 1000;
  t.is((await search('c')).status, 200);
  clock.now += 1000;
  t.is((await search('d')).status, 429);
  t.is(await metricValue(gateway, 'searchgate_allowance_refusals_total', { operation: 'web-search', limit: 'second' }), 1);
  t.is(await metricValue(gateway, 'searchgate_allowance_refusals_total', { operation: 'web-search', limit: 'day' }), 1);
  t.is(await metricValue(gateway, 'searchgate_allowance_units_total', { outcome: 'charged' }), 2);
});

test('an exhausted daily allowance answers 429 with its own message, new keys do not restore it, and it resets at 00:00 UTC', async (t) => {
  const { search, clock, service, account, gateway } = await setup(t, {}, { dailyAllowance: 3 });
  for (let i = 0; i < 3; i++) t.is((await search(`q${i}`)).status, 200);
  clock.now = MIDNIGHT - 30_000;
  const refused = await search('q3');
  t.is(refused.headers.get('retry-after'), '30');
  t.is(refused.headers.get('x-ratelimit-scope'), 'day');
  t.is(refused.headers.get('x-ratelimit-remaining'), '0');
  t.is(refused.headers.get('x-ratelimit-reset'), String(MIDNIGHT / 1000));
  const { message } = await expectErrorResponse(t, gateway, refused, 429);
  t.regex(message, /^daily allowance exhausted: 3 of 3 units used today; it resets at 2026-11-24T00:00:00\.000Z \(00:00 UTC\), and new keys do not restore it$/);
  t.notRegex(message, /rate limit exceeded/);

  const fresh = await service.createKey(account.id, 'fresh');
  t.is((await search('q4', fresh.key)).status, 429, 'all keys of an account share one allowance');

  clock.now = MIDNIGHT - 1;
  t.is((await search('q5')).status, 429, 'one millisecond before midnight it is still exhausted');
  clock.now = MIDNIGHT;
  const afterReset = await search('q6');
  t.is(afterReset.status, 200);
  t.is(afterReset.headers.get('x-ratelimit-remaining'), '2');
  t.is(afterReset.headers.get('x-ratelimit-reset'), String((MIDNIGHT + 86_400_000) / 1000));
});

test('operation weights come from config: a web search can cost several units', async (t) => {
  const { search, gateway } = await setup(t, { weights: { webSearch: 3 } }, { dailyAllowance: 7 });
  t.is((await search('a')).headers.get('x-ratelimit-remaining'), '4');
  t.is((await search('b')).headers.get('x-ratelimit-remaining'), '1');
  t.regex((await expectErrorResponse(t, gateway, await search('c'), 429)).message, /6 of 7 units used today/);
});

test('a client error is not charged; a server-side failure is refunded; a cached answer is charged', async (t) => {
  const { gateway, search, key } = await setup(t, {}, { dailyAllowance: 10 });
  const invalid = await gateway.post('/v1/web-search', { query: 'q', count: 51 }, { authorization: `Bearer ${key}` });
  t.is(invalid.status, 400);
  const failed = await search('fail');
  t.is(failed.status, 502);
  t.is(failed.headers.get('x-ratelimit-remaining'), '9', 'the header was set when charged');
  const first = await search('cached');
  t.is(first.headers.get('x-ratelimit-remaining'), '9', 'the failed request was refunded before this one');
  const again = await search('cached');
  t.is(again.headers.get('x-cache'), 'HIT');
  t.is(again.headers.get('x-ratelimit-remaining'), '8');
  t.is(await metricValue(gateway, 'searchgate_allowance_units_total', { operation: 'web-search', outcome: 'charged' }), 3);
  t.is(await metricValue(gateway, 'searchgate_allowance_units_total', { operation: 'web-search', outcome: 'refunded' }), 1);
});

test('operator keys from config keep working, unmetered and without allowance headers', async (t) => {
  const { gateway } = await setup(t, { defaults: { dailyAllowance: 0, ratePerSecond: 0, ratePerMinute: 0 } });
  const response = await gateway.post('/v1/web-search', { query: 'q' }, { authorization: `Bearer ${TEST_KEY}` });
  t.is(response.status, 200);
  t.is(response.headers.get('x-ratelimit-limit'), null);
});

test('last use is recorded, and the log names the key prefix and account, never the key', async (t) => {
  const { search, service, record, key, gateway } = await setup(t);
  t.is((await service.store.listKeys())[0]!.lastUsedAt, null);
  t.is((await search()).status, 200);
  await service.flush();
  t.is((await service.store.listKeys())[0]!.lastUsedAt, NOON);
  const line = gateway.logLines.map((text) => JSON.parse(text)).find((entry) => entry.msg === 'request' && entry.status === 200);
  t.is(line.key, `sg_${record.id}`);
  t.is(line.account, 'acme');
  t.false(gateway.logLines.join('\n').includes(key.slice(16)));
});
