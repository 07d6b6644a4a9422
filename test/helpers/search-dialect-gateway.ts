/**
 * What the search dialects' tests share (test/vendors/<vendor>/dialect.test.ts): a gateway in front
 * of one scripted searchgate-compatible upstream that answers a known list of results, an account
 * with a working key, a deleted key and one of a disabled account, the upstream failures of §7
 * picked by query, and the check that a key never shows in logs, metrics or answers (R3). The
 * gateway over the embedded default is search-dialect-bench.ts's.
 */
import type { ExecutionContext } from 'ava';
import type { NewAccount } from '../../src/state/store.js';
import { metricIn, reply, scriptedChain, stall, type Fault } from './faults.js';
import { searchEnvelope, sendJson, type RunningGateway } from './gateway.js';

/** The upstream's estimate of matches, which the dialects report as their totals. */
export const UPSTREAM_TOTAL = 1320;

/**
 * 30 results in /v1's shape: the first dated, with a URL that has every part (params, query,
 * fragment); the second without title or snippet (R6 defaults); the rest on three sites.
 */
export const DIALECT_RESULTS: Array<Record<string, unknown>> = [
  {
    name: 'Routine Vacuuming',
    url: 'https://www.postgresql.org/docs/current/routine-vacuuming.html;v=1?lang=en#autovacuum',
    snippet: 'PostgreSQL databases require periodic maintenance known as vacuuming.',
    datePublished: '2024-11-14T00:00:00.000Z',
  },
  { url: 'https://untitled.example/page' },
  ...Array.from({ length: 28 }, (_, i) => ({
    name: `Result ${i + 2} <b> & co`,
    url: `https://site${i % 3}.example/page-${i + 2}`,
    snippet: `Snippet ${i + 2}`,
  })),
];

/** Upstream answers by query: these fail as §7's upstream rows need; any other query gets DIALECT_RESULTS. */
export const FAILING_QUERIES = {
  /** 500 every time: the chain failed, 502. */
  failure: reply(500, { code: 500, msg: 'boom' }),
  /** 429 with a long Retry-After: every provider rate-limited, 503. */
  unavailable: reply(429, { code: 429, msg: 'slow down' }, { 'retry-after': '30' }),
  /** Never answers: 504 once the provider's timeout passes (TIMEOUT_CONFIG shortens it). */
  timeout: stall(),
} satisfies Record<string, Fault>;

/** Config for a gateway whose provider gives up soon, for the `timeout` query. */
export const TIMEOUT_CONFIG = { provider: { timeoutMs: 300 } };

const answerByQuery: Fault = (request, res, req) => {
  const fault = FAILING_QUERIES[request.body?.query as keyof typeof FAILING_QUERIES];
  if (fault) return fault(request, res, req);
  return sendJson(res, 200, searchEnvelope(DIALECT_RESULTS, { totalEstimatedMatches: UPSTREAM_TOTAL }));
};

export interface DialectGateway {
  gateway: RunningGateway;
  /** What the upstream received: the internal request as the provider sends it. */
  upstreamBodies(): Array<Record<string, any>>;
  /** A key of an account with the allowance and rates asked for (default: 1000 a day, no rate limit). */
  key: string;
  deletedKey: string;
  disabledKey: string;
  /** Another key of `key`'s account with these limits. */
  keyWith(limits: Partial<NewAccount>): Promise<string>;
}

/** A gateway for a dialect's tests, closed when the test ends. `options.now` fixes its clock. */
export async function dialectGateway(t: ExecutionContext, options: { config?: Record<string, unknown>; now?: () => number } = {}): Promise<DialectGateway> {
  const { gateway, upstreams } = await scriptedChain(
    t,
    { up: [answerByQuery] },
    {
      // Generous: a loaded machine runs many of these gateways at once.
      provider: { timeoutMs: 10_000 },
      retry: { retries: 0, maxRetryAfterMs: 1000 },
      accounts: { defaults: { ratePerSecond: 0, ratePerMinute: 0 } },
      ...options.config,
    },
    options.now ? { now: options.now } : {},
  );
  const accounts = gateway.gateway.services.accounts;
  const now = options.now ?? Date.now;
  const newKey = async (account: Partial<NewAccount>) => {
    const created = await accounts.store.createAccount({ name: `account-${Math.random().toString(36).slice(2)}`, ...account }, now());
    return { account: created, ...(await accounts.createKey(created.id, 'test')) };
  };
  const main = await newKey({});
  const deleted = await newKey({});
  await accounts.store.deleteKey(deleted.record.id, now());
  const disabled = await newKey({});
  await accounts.store.updateAccount(disabled.account.id, { status: 'disabled' });
  return {
    gateway,
    upstreamBodies: () => upstreams.up!.requests.map((request) => request.body),
    key: main.key,
    deletedKey: deleted.key,
    disabledKey: disabled.key,
    keyWith: async (limits) => (await newKey(limits)).key,
  };
}

/**
 * The two refusals of an account's limits, through `search`: a key whose daily allowance of 1 is
 * spent, and one past its rate of 1 a minute (the gateway's clock must stand still). Both carry
 * Retry-After and the X-RateLimit-Scope of the limit; their bodies are left to the caller.
 */
export async function limitRefusals(
  t: ExecutionContext,
  { keyWith }: Pick<DialectGateway, 'keyWith'>,
  search: (key: string, query: string) => Promise<Response>,
): Promise<{ exhausted: Response; limited: Response }> {
  const refusal = async (limits: Partial<NewAccount>, scope: string) => {
    const key = await keyWith(limits);
    t.is((await search(key, 'first')).status, 200);
    const refused = await search(key, 'second');
    t.is(refused.headers.get('x-ratelimit-scope'), scope);
    t.regex(refused.headers.get('retry-after') ?? '', /^\d+$/);
    return refused;
  };
  return { exhausted: await refusal({ dailyAllowance: 1 }, 'day'), limited: await refusal({ ratePerMinute: 1 }, 'minute') };
}

/** R3: no key appears in the gateway's log lines, its /metrics or the given answer texts. */
export async function expectKeysNowhere(t: ExecutionContext, gateway: RunningGateway, keys: readonly string[], answers: readonly string[] = []) {
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  for (const key of keys) {
    // The secret part: the key's public id (sg_<id>) is its name, which logs may show.
    const secret = key.slice(-20);
    t.false(gateway.logLines.some((line) => line.includes(secret)), 'a log line shows a key');
    t.false(metrics.includes(secret), '/metrics shows a key');
    for (const answer of answers) t.false(answer.includes(secret), 'an answer shows a key');
  }
}

/** The sum of searchgate_http_requests_total for a route template and status. */
export async function requestsCounted(gateway: RunningGateway, route: string, status: number): Promise<number> {
  return metricIn(await (await fetch(`${gateway.url}/metrics`)).text(), 'searchgate_http_requests_total', { route, status: String(status) });
}
