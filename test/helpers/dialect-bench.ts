/**
 * The bench of the search dialects' tests (test/vendors/<vendor>/dialect.test.ts; ../shared/spec/
 * dialects.md §5–7), one for every vendor:
 * - dialectBench(): a running gateway in front of one scripted searchgate-compatible upstream
 *   (faults.ts) whose answers and failures a test chooses, a loopback page site behind the content
 *   chain (the local content provider, allowed onto loopback), an injected clock that stands still
 *   unless a test moves it, and account keys;
 * - the account-keys fixture: a working, a deleted and a disabled key on every bench, any other
 *   account with accountKey(), spent and rate-limited keys with limitRefusals() (accountKeys() is
 *   what the rerank dialects' helpers make their keys with too);
 * - embeddedDefaultGateway(): a gateway over the embedded default, the local index, for search and
 *   page content alike;
 * - the check that a key is nowhere: not in the log, /metrics or an answer.
 * What only one vendor needs (its error shape, its key header, a fake of its API) stays in that
 * vendor's folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { DialectInput, DialectRoute, DialectTools } from '../../src/dialects/types.js';
import { openLocalIndex } from '../../src/local/index/index.js';
import { contentHash } from '../../src/local/ingest/indexed-page.js';
import type { IndexedPage } from '../../src/local/types.js';
import type { NewAccount } from '../../src/state/store.js';
import { reply, scriptedChain, searchOk, stall, type Fault } from './faults.js';
import { searchEnvelope, sendJson, startGateway, startUpstream, type RunningGateway } from './gateway.js';

// ---- what the upstream answers ---------------------------------------------------------------------

/** What the search upstream answers unless a test says otherwise: a dated result, an untitled one, a third. */
export const UPSTREAM_RESULTS = [
  {
    name: 'Routine Vacuuming',
    url: 'https://www.postgresql.org/docs/current/routine-vacuuming.html',
    snippet: 'PostgreSQL databases require periodic maintenance known as vacuuming.',
    datePublished: '2024-11-14T00:00:00Z',
  },
  { name: 'https://wiki.example.org/vacuum', url: 'https://wiki.example.org/vacuum', snippet: 'Autovacuum tuning notes for large tables.' },
  { name: 'Vacuum cleaners reviewed', url: 'https://shop.example.com/vacuums', snippet: 'Our review of vacuum cleaners for the home.' },
];

/** The upstream's estimate of matches beside PAGED_RESULTS, which the dialects report as their totals. */
export const PAGED_TOTAL = 1320;

/**
 * 30 results in /v1's shape, enough to page through: the first dated, with a URL that has every part
 * (params, query, fragment); the second without title or snippet (R6 defaults); the rest on three sites.
 */
export const PAGED_RESULTS: Array<Record<string, unknown>> = [
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

/** The upstream failures of §7's rows, by the name a test picks them with. */
export const UPSTREAM_FAILURES = {
  /** 500: the chain failed, 502. */
  failure: reply(500, { code: 500, msg: 'boom' }),
  /** 429 with a long Retry-After: every provider rate-limited (and paused), 503. */
  unavailable: reply(429, { code: 429, msg: 'slow down' }, { 'retry-after': '30' }),
  /** Never answers: 504 once the provider's timeout passes (a bench with timeoutMs: STALL_TIMEOUT_MS). */
  timeout: stall(),
} satisfies Record<string, Fault>;

/** The provider timeout of a bench whose upstream will stall: short, so that the 504 comes soon. */
export const STALL_TIMEOUT_MS = 1000;

/** Answers a query named in UPSTREAM_FAILURES with that failure, any other with PAGED_RESULTS. */
const pagedAnswers: Fault = (request, res, req) => {
  const failure = UPSTREAM_FAILURES[request.body?.query as keyof typeof UPSTREAM_FAILURES];
  return (failure ?? searchOk(PAGED_RESULTS, { totalEstimatedMatches: PAGED_TOTAL }))(request, res, req);
};

/** Bench options whose upstream answers PAGED_RESULTS, failing the queries named in UPSTREAM_FAILURES. */
export const PAGED = { answer: pagedAnswers } satisfies DialectBenchOptions;

/** Answers results numbered 0.., as many as asked for: a page shows which slice it is. */
export const numberedResults: Fault = (request, res) => {
  const results = Array.from({ length: request.body.count }, (_, i) => ({ name: `Result ${i}`, url: `https://n.example/${i}`, snippet: `number ${i}` }));
  sendJson(res, 200, searchEnvelope(results));
};

// ---- the page site ---------------------------------------------------------------------------------

export const ARTICLE_TITLE = 'How autovacuum keeps tables healthy';
export const ARTICLE_SENTENCES = [
  'Autovacuum removes dead tuples so that tables do not bloat over time.',
  'It runs in the background and is tuned per table with storage parameters.',
  'A table that is never vacuumed eventually risks transaction ID wraparound.',
];

const ARTICLE_HTML = `<!doctype html><html lang="en"><head><title>${ARTICLE_TITLE}</title>
<meta property="article:published_time" content="2024-02-03T04:05:06Z"></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>${ARTICLE_TITLE}</h1>${ARTICLE_SENTENCES.map((sentence) => `<p>${sentence}</p>`).join('')}</article>
<footer>Copyright 2024 Example Corp.</footer></body></html>`;

/** A loopback site: /article is ARTICLE_HTML, /slow never answers, anything else is a 404. */
function startPageSite() {
  return startUpstream((request, res) => {
    if (request.url === '/article') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(ARTICLE_HTML);
    } else if (request.url === '/slow') {
      // Never answers: the page of a time budget that runs out.
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    }
  });
}

// ---- account keys ----------------------------------------------------------------------------------

/** An account's own limits (the gateway's defaults where absent). */
export type AccountLimits = Omit<NewAccount, 'name'>;

export interface AccountKey {
  key: string;
  accountId: string;
  keyId: string;
  deleteKey(): Promise<void>;
  disableAccount(): Promise<void>;
}

/**
 * Makes account keys in `gateway`'s store: each call a new account `${name}-1`, `${name}-2`… with
 * `limits`, then the call's own, and one key of it. `now` is the gateway's clock.
 */
export function accountKeys(gateway: RunningGateway, { name, now, limits: base = {} }: { name: string; now: () => number; limits?: AccountLimits }) {
  const { accounts } = gateway.gateway.services;
  let created = 0;
  return async (limits: AccountLimits = {}): Promise<AccountKey> => {
    const { id } = await accounts.store.createAccount({ name: `${name}-${++created}`, ...base, ...limits }, now());
    const { key, record } = await accounts.createKey(id, 'test');
    return {
      key,
      accountId: id,
      keyId: record.id,
      deleteKey: async () => void (await accounts.store.deleteKey(record.id, now())),
      disableAccount: async () => void (await accounts.store.updateAccount(id, { status: 'disabled' })),
    };
  };
}

/**
 * The two refusals of an account's limits, through `search`: a key whose daily allowance of 1 is
 * spent, and one past its rate of 1 a minute (the gateway's clock must stand still). Both carry
 * Retry-After and the X-RateLimit-Scope of the limit; their bodies are left to the caller.
 */
export async function limitRefusals(
  t: ExecutionContext,
  { accountKey }: Pick<DialectBench, 'accountKey'>,
  search: (key: string, query: string) => Promise<Response>,
): Promise<{ exhausted: Response; limited: Response }> {
  const refusal = async (limits: AccountLimits, scope: string) => {
    const { key } = await accountKey(limits);
    t.is((await search(key, 'first')).status, 200);
    const refused = await search(key, 'second');
    t.is(refused.headers.get('x-ratelimit-scope'), scope);
    t.regex(refused.headers.get('retry-after') ?? '', /^\d+$/);
    return refused;
  };
  return { exhausted: await refusal({ dailyAllowance: 1 }, 'day'), limited: await refusal({ ratePerMinute: 1 }, 'minute') };
}

// ---- the bench -------------------------------------------------------------------------------------

export interface DialectBenchOptions {
  /** What the search upstream answers until a test says otherwise (default: UPSTREAM_RESULTS; PAGED: PAGED_RESULTS, failing by query). */
  answer?: Fault;
  /** The search provider's timeout: generous, since a loaded machine runs many benches at once; STALL_TIMEOUT_MS for a stall. */
  timeoutMs?: number;
  /** The gateway clock's time (epoch ms; default: when the bench starts). It stands still unless a test sets bench.clock.now. */
  now?: number;
  /** Options of the local content provider (allowPrivateNetworks is on unless set). */
  local?: Record<string, unknown>;
  /** Other config sections (accounts, auth, dialects, server…), each replacing the bench's own. */
  config?: Record<string, unknown>;
}

/**
 * A gateway whose search chain is one scripted upstream (`up`) and whose content chain is the local
 * provider reading the page site; no retries. Accounts made here have no rate limits unless given.
 * Everything closes when the test ends.
 */
export async function dialectBench(t: ExecutionContext, options: DialectBenchOptions = {}) {
  const site = await startPageSite();
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-dialect-'));
  t.teardown(async () => {
    await site.close();
    rmSync(directory, { recursive: true, force: true });
  });
  const clock = { now: options.now ?? Date.now() };
  const now = () => clock.now;
  let answer = options.answer ?? searchOk(UPSTREAM_RESULTS);
  const { gateway, upstreams } = await scriptedChain(
    t,
    { up: () => answer },
    {
      provider: { timeoutMs: options.timeoutMs ?? 10_000 },
      providers: { local: { type: 'local', directory, allowPrivateNetworks: true, ...options.local } },
      content: { chain: ['local'], timeBudgetMs: 5000 },
      retry: { retries: 0 },
      ...options.config,
    },
    { now },
  );
  const upstream = upstreams.up!;
  const noRateLimits = { ratePerSecond: 0, ratePerMinute: 0 };
  const fixtureKey = accountKeys(gateway, { name: 'fixture', now, limits: noRateLimits });
  const working = await fixtureKey();
  const deleted = await fixtureKey();
  await deleted.deleteKey();
  const disabled = await fixtureKey();
  await disabled.disableAccount();

  return {
    gateway,
    /** The gateway's clock. */
    clock,
    upstream: {
      ...upstream,
      /** Sets what the search upstream answers from now on. */
      answer: (fault: Fault) => {
        answer = fault;
      },
      /** What the upstream received: the internal request as the provider sends it. */
      bodies: (): Array<Record<string, any>> => upstream.requests.map((request) => request.body),
      /** The body of the last search request the upstream received. */
      lastBody: () => upstream.requests.at(-1)?.body,
    },
    site,
    pages: {
      article: `${site.url}/article`,
      missing: `${site.url}/missing`,
      slow: `${site.url}/slow`,
      /** Nothing listens on port 1: the connection is refused. */
      refused: 'http://127.0.0.1:1/refused',
    },
    /** Keys of accounts of 1000 units a day: one that works, one deleted, one whose account is disabled. */
    keys: { working: working.key, deleted: deleted.key, disabled: disabled.key },
    /** A key of a new account client-N (1000 units a day and no rate limits unless given). */
    accountKey: accountKeys(gateway, { name: 'client', now, limits: noRateLimits }),
  };
}

export type DialectBench = Awaited<ReturnType<typeof dialectBench>>;

// ---- the embedded default --------------------------------------------------------------------------

/** A page as the local index holds it, fetched 2026-11-01, in English. */
export function indexedPage({ url, title, text, datePublished = null }: { url: string; title: string; text: string; datePublished?: string | null }): IndexedPage {
  const domain = new URL(url).hostname.replace(/^www\./, '');
  return { url, canonicalUrl: url, title, text, datePublished, domain, language: 'en', fetchedAt: '2026-11-01T00:00:00.000Z', contentHash: contentHash(text) };
}

/** The one page of the embedded default's index. */
export const INDEXED_PAGE: IndexedPage = indexedPage({
  url: 'https://docs.postgres.example/vacuum',
  title: 'Routine vacuuming',
  text: 'PostgreSQL databases require periodic maintenance known as vacuuming. Autovacuum does it in the background.',
  datePublished: '2024-05-05T10:00:00.000Z',
});

/** Writes a local index of `pages` into `directory`; returns the directory. */
export async function writeLocalIndex(directory: string, pages: readonly IndexedPage[]): Promise<string> {
  const index = await openLocalIndex(directory);
  await index.upsert([...pages]);
  await index.close();
  return directory;
}

/** A gateway whose search and content chains are the local index, holding INDEXED_PAGE; both go when the test ends. */
export async function embeddedDefaultGateway(t: ExecutionContext): Promise<RunningGateway> {
  const directory = await writeLocalIndex(mkdtempSync(join(tmpdir(), 'searchgate-dialect-index-')), [INDEXED_PAGE]);
  const gateway = await startGateway({ providers: { local: { type: 'local', directory } }, search: { chain: ['local'] }, content: { chain: ['local'] } });
  t.teardown(async () => {
    await gateway.close();
    rmSync(directory, { recursive: true, force: true });
  });
  return gateway;
}

// ---- requests and readers --------------------------------------------------------------------------

export const json = async (response: Response) => (await response.json()) as any;

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** POST a JSON body (a string is sent as it is) with exactly these headers (no Authorization unless given). */
export const postJson = (gateway: { url: string }, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** The UTC day (YYYY-MM-DD) of an instant. */
export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The internal request a dialect route reads from a request without headers, on the real clock. */
export function readRequest(route: DialectRoute, { method, query = {}, body = {} }: Partial<Omit<DialectInput, 'header'>> & { method: string }) {
  const input: DialectInput = { method, query, body, header: () => undefined };
  return route.read(input, { now: Date.now } as DialectTools).request as Record<string, any>;
}

// ---- the key is nowhere ----------------------------------------------------------------------------

const metricsOf = async (gateway: RunningGateway) => (await fetch(`${gateway.url}/metrics`)).text();

/** Every place a key could leak to: the gateway's log lines and its /metrics, as one text. */
export async function leakSurfaces(gateway: RunningGateway): Promise<string> {
  return `${gateway.logLines.join('\n')}\n${await metricsOf(gateway)}`;
}

/** R3: no key appears in the gateway's log lines, its /metrics or the given answer texts. */
export async function expectKeysNowhere(t: ExecutionContext, gateway: RunningGateway, keys: readonly string[], answers: readonly string[] = []) {
  const metrics = await metricsOf(gateway);
  for (const key of keys) {
    // The secret part: the key's public id (sg_<id>) is its name, which logs may show.
    const secret = key.slice(-20);
    t.false(gateway.logLines.some((line) => line.includes(secret)), 'a log line shows a key');
    t.false(metrics.includes(secret), '/metrics shows a key');
    for (const answer of answers) t.false(answer.includes(secret), 'an answer shows a key');
  }
}
