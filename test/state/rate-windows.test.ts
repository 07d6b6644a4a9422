import { randomBytes, randomUUID } from 'node:crypto';
import test from 'ava';
import { MemoryRateWindows } from '../../src/state/embedded.js';
import { PostgresRateWindows, PostgresStore } from '../../src/state/postgres.js';
import { RedisRateWindows } from '../../src/state/redis.js';
import type { RateLimits, RateWindows } from '../../src/state/store.js';
import { POSTGRES_URL, REDIS_URL, testSchemas } from '../helpers/databases.js';

/** The start of a minute, so that every offset below one minute stays in the same minute window. */
const T = Date.UTC(2030, 0, 1);

/** Two replicas of one database: separate pools, one schema for this file, dropped at the end. */
const schemas = testSchemas();
const schema = schemas.fresh();
const postgresReplicas = [new PostgresStore({ url: POSTGRES_URL, schema }), new PostgresStore({ url: POSTGRES_URL, schema })] as const;

test.before(() => postgresReplicas[0].migrate());
test.after.always(async () => {
  await schemas.dropAll();
  await Promise.all(postgresReplicas.map((replica) => replica.close()));
});

/**
 * Each backend opens two clients of the same shared state, as two gateway processes would; the
 * embedded default's windows live in one process, so its two clients are the same object.
 */
const backends: Record<string, () => RateWindows[]> = {
  memory: () => {
    const windows = new MemoryRateWindows();
    return [windows, windows];
  },
  redis: () => {
    const keyPrefix = `sg_test_${randomBytes(6).toString('hex')}`;
    return [new RedisRateWindows({ url: REDIS_URL, keyPrefix }), new RedisRateWindows({ url: REDIS_URL, keyPrefix })];
  },
  postgres: () => postgresReplicas.map((replica) => new PostgresRateWindows(replica)),
};

for (const [label, openClients] of Object.entries(backends)) {
  const setup = (t: { teardown(fn: () => Promise<unknown>): void }) => {
    const clients = openClients() as [RateWindows, RateWindows];
    t.teardown(() => Promise.all(clients.map((client) => client.close())));
    const accountId = randomUUID();
    const hit = async (limits: RateLimits, now: number, client = clients[0]) => (await client.hit(accountId, limits, now)).refusal;
    return { clients, accountId, hit };
  };

  test(`${label}: a per-second limit admits exactly that many, then refuses until the next second`, async (t) => {
    const { clients, hit } = setup(t);
    const limits = { perSecond: 3, perMinute: 0 };
    for (const offset of [100, 150, 200]) t.is(await hit(limits, T + offset), undefined);
    t.deepEqual(await hit(limits, T + 250), { window: 'second', limit: 3, retryAfterMs: 750 });
    t.deepEqual(await hit(limits, T + 999), { window: 'second', limit: 3, retryAfterMs: 1 });
    t.is((await clients[0].hit(randomUUID(), limits, T + 999)).refusal, undefined, 'other accounts have their own windows');
    t.is(await hit(limits, T + 1000), undefined, 'the next second admits again');
  });

  test(`${label}: a per-minute limit refuses with the minute window`, async (t) => {
    const { hit } = setup(t);
    const limits = { perSecond: 10, perMinute: 4 };
    for (const second of [0, 1, 2, 3]) t.is(await hit(limits, T + second * 1000), undefined);
    t.deepEqual(await hit(limits, T + 4000), { window: 'minute', limit: 4, retryAfterMs: 56_000 });
    t.is(await hit(limits, T + 60_000), undefined, 'the next minute admits again');
  });

  test(`${label}: a refusal counts in no window`, async (t) => {
    const { hit } = setup(t);
    const limits = { perSecond: 2, perMinute: 3 };
    t.is(await hit(limits, T), undefined);
    t.is(await hit(limits, T + 1), undefined);
    t.like(await hit(limits, T + 2), { window: 'second' });
    t.is(await hit(limits, T + 1000), undefined);
    t.like(await hit(limits, T + 1001), { window: 'minute' });
    // Were the minute refusal counted in its second, this second would now be full.
    const secondOnly = { perSecond: 2, perMinute: 0 };
    t.is(await hit(secondOnly, T + 1002), undefined);
    t.like(await hit(secondOnly, T + 1003), { window: 'second' });
  });

  test(`${label}: when both windows are full, the minute one is named, as retrying sooner fails`, async (t) => {
    const { hit } = setup(t);
    const limits = { perSecond: 1, perMinute: 1 };
    t.is(await hit(limits, T + 500), undefined);
    t.deepEqual(await hit(limits, T + 500), { window: 'minute', limit: 1, retryAfterMs: 59_500 });
  });

  test(`${label}: a limit of zero turns its window off`, async (t) => {
    const { hit } = setup(t);
    for (let i = 0; i < 20; i++) t.is(await hit({ perSecond: 0, perMinute: 0 }, T), undefined);
    for (let i = 0; i < 3; i++) t.is(await hit({ perSecond: 0, perMinute: 3 }, T + 100), undefined);
    t.like(await hit({ perSecond: 0, perMinute: 3 }, T + 100), { window: 'minute' });
    t.is(await hit({ perSecond: 5, perMinute: 0 }, T + 100), undefined, 'the full minute window is off now');
  });

  test(`${label}: concurrent hits from two clients admit exactly the limit`, async (t) => {
    const { clients, hit } = setup(t);
    const limits = { perSecond: 7, perMinute: 1000 };
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => hit(limits, T + 500, clients[i % 2])));
    t.is(outcomes.filter((refusal) => refusal === undefined).length, 7);
    t.true(outcomes.every((refusal) => refusal === undefined || refusal.window === 'second'));
  });

  test(`${label}: every hit reports the per-second window it leaves, counted or refused`, async (t) => {
    const { clients, accountId } = setup(t);
    const limits = { perSecond: 3, perMinute: 5 };
    const hit = (now: number, client = clients[0]) => client.hit(accountId, limits, now);
    t.deepEqual(await hit(T + 100), { refusal: undefined, perSecond: { limit: 3, remaining: 2 } });
    t.deepEqual(await hit(T + 200, clients[1]), { refusal: undefined, perSecond: { limit: 3, remaining: 1 } }, 'counted across clients');
    t.deepEqual(await hit(T + 300), { refusal: undefined, perSecond: { limit: 3, remaining: 0 } });
    t.deepEqual(await hit(T + 400), { refusal: { window: 'second', limit: 3, retryAfterMs: 600 }, perSecond: { limit: 3, remaining: 0 } });
    t.deepEqual(await hit(T + 1000), { refusal: undefined, perSecond: { limit: 3, remaining: 2 } }, 'a new second');
    t.deepEqual(await hit(T + 1100), { refusal: undefined, perSecond: { limit: 3, remaining: 1 } });
    // The minute is full now: its refusal counts nothing, so the second keeps what it had left.
    t.deepEqual(await hit(T + 1200), { refusal: { window: 'minute', limit: 5, retryAfterMs: 58_800 }, perSecond: { limit: 3, remaining: 1 } });
    t.deepEqual(
      await clients[0].hit(accountId, { perSecond: 0, perMinute: 10 }, T + 1300),
      { refusal: undefined, perSecond: null },
      'an account without a per-second limit has no such window',
    );
  });
}
