/**
 * Two gateway processes sharing the real PostgreSQL (and Redis): a concurrent burst against an
 * allowance of N grants exactly N across both, on either side of a simulated 00:00 UTC reset.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { PostgresStore } from '../../src/state/postgres.js';
import { AccountService } from '../../src/state/accounts.js';
import { MemoryRateWindows } from '../../src/state/embedded.js';
import { POSTGRES_URL, REDIS_URL, testSchemas } from '../helpers/databases.js';
import { searchEnvelope, sendJson, startUpstream, upstreamConfig } from '../helpers/gateway.js';
import { startReplica } from '../helpers/replica.js';

const ALLOWANCE = 25;
const DAY_B_LAST_SECOND = Date.UTC(2030, 5, 1, 23, 59, 59, 900);
const DAY_C_START = Date.UTC(2030, 5, 2, 0, 0, 0, 100);

const schemas = testSchemas();
test.after.always(() => schemas.dropAll());

for (const withRedis of [true, false]) {
  const label = withRedis ? 'Postgres and Redis' : 'Postgres alone';

  test.serial(`two replicas on ${label}: a concurrent burst gets exactly the allowance, on both sides of midnight`, async (t) => {
    t.timeout(120_000);
    const schema = schemas.fresh();
    const upstream = await startUpstream((_request, res) => sendJson(res, 200, searchEnvelope([])));
    const admin = new PostgresStore({ url: POSTGRES_URL, schema });
    t.teardown(async () => {
      await admin.close();
      await upstream.close();
    });
    const config = {
      ...upstreamConfig(upstream.url),
      logging: { level: 'warn' },
      cache: { enabled: false },
      accounts: {
        store: 'postgres',
        postgres: { url: POSTGRES_URL, schema },
        ...(withRedis ? { redis: { url: REDIS_URL, keyPrefix: `sgtest-${randomBytes(4).toString('hex')}` } } : {}),
        defaults: { dailyAllowance: ALLOWANCE, ratePerSecond: 0, ratePerMinute: 0 },
      },
    };
    const replicas = [await startReplica(t, config), await startReplica(t, config)];
    const accounts = new AccountService(admin, new MemoryRateWindows(), { defaults: config.accounts.defaults, weights: { 'web-search': 1, rerank: 1, content: 1 }, touchIntervalMs: 60_000 }, Date.now);
    const account = await admin.createAccount({ name: 'burst' }, Date.now());
    const { key, record } = await accounts.createKey(account.id, 'burst');
    const setNow = (ms: number) => Promise.all(replicas.map((replica) => replica.setNow(ms)));
    const fire = (count: number) =>
      Array.from({ length: count }, (_, i) =>
        fetch(`${replicas[i % 2]!.url}/v1/web-search`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: `q${i}` }),
        }).then(async (response) => ({
          status: response.status,
          reset: response.headers.get('x-ratelimit-reset'),
          message: response.ok ? '' : ((await response.json()) as { message: string }).message,
        })),
      );

    // Day A: 100 requests at once across both replicas.
    await setNow(Date.UTC(2030, 4, 31, 12));
    const dayA = await Promise.all(fire(100));
    t.is(dayA.filter((answer) => answer.status === 200).length, ALLOWANCE);
    t.true(dayA.filter((answer) => answer.status === 429).every((answer) => /^daily allowance exhausted/.test(answer.message)));
    t.is(dayA.filter((answer) => answer.status !== 200 && answer.status !== 429).length, 0);

    // Across the reset: a burst starts in the last 100 ms of day B, the clocks turn to day C while it
    // is in flight, and a second burst follows. Each reply's X-RateLimit-Reset says which day it was charged to.
    await setNow(DAY_B_LAST_SECOND);
    const early = fire(30);
    let settled = 0;
    await new Promise<void>((resolve) => early.forEach((answer) => void answer.then(() => ++settled === 10 && resolve())));
    await setNow(DAY_C_START);
    const answers = [...(await Promise.all(early)), ...(await Promise.all(fire(60)))];
    const grantedOn = (midnight: number) => answers.filter((answer) => answer.status === 200 && answer.reset === String(midnight / 1000)).length;
    const dayB = grantedOn(Date.UTC(2030, 5, 2));
    const dayC = grantedOn(Date.UTC(2030, 5, 3));
    t.true(dayB >= 10 && dayB <= ALLOWANCE, `day B granted ${dayB}`);
    t.is(dayC, ALLOWANCE, 'day C had more requests than its allowance, and granted exactly the allowance');
    t.is(answers.filter((answer) => answer.status === 200).length, dayB + dayC);
    t.is(answers.filter((answer) => answer.status === 429).length, answers.length - dayB - dayC);
    const usage = await admin.usage(account.id, '2030-05-31', '2030-06-02');
    t.deepEqual(
      usage,
      [
        { day: '2030-05-31', used: ALLOWANCE },
        { day: '2030-06-01', used: dayB },
        { day: '2030-06-02', used: dayC },
      ].filter((row) => row.used > 0),
      'the ledger holds exactly what was granted',
    );

    // A key deleted in the shared store is refused by every replica on its very next request.
    await admin.deleteKey(record.id, Date.now());
    for (const replica of replicas) {
      const response = await fetch(`${replica.url}/v1/web-search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'after delete' }),
      });
      t.is(response.status, 401);
      t.regex(((await response.json()) as { message: string }).message, /has been deleted/);
    }
    t.log(`day B granted ${dayB} of 30 early requests; day C granted ${dayC}`);
  });
}
