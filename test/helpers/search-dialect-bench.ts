/**
 * A running gateway for the tests of a search-and-content dialect (Tavily, Exa): a scripted
 * searchgate-compatible search upstream whose next answer a test sets, a loopback site whose pages
 * the content chain (the local provider, allowed onto loopback) fetches, an injected clock, and
 * account keys in each state a client meets (working, deleted, disabled, spent, rate-limited); and a
 * gateway over the embedded default, the local index, for search and page content alike.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { openLocalIndex } from '../../src/local/index/index.js';
import { contentHash } from '../../src/local/ingest/indexed-page.js';
import type { IndexedPage } from '../../src/local/types.js';
import type { NewAccount } from '../../src/state/store.js';
import { reply, type Fault } from './faults.js';
import { searchEnvelope, startGateway, startUpstream, type RunningGateway } from './gateway.js';

/** What the search upstream answers unless a test says otherwise. */
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

export interface BenchOptions {
  /** Config sections merged over the bench's own (accounts, content, server…). */
  config?: Record<string, unknown>;
  /** Options of the local content provider (allowPrivateNetworks is on unless set). */
  local?: Record<string, unknown>;
}

export interface AccountKey {
  key: string;
  accountId: string;
  deleteKey(): Promise<void>;
  disableAccount(): Promise<void>;
}

export async function searchDialectBench(t: ExecutionContext, { config = {}, local = {} }: BenchOptions = {}) {
  const site = await startUpstream((request, res) => {
    if (request.url === '/article') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(ARTICLE_HTML);
    } else if (request.url === '/slow') {
      // Never answers: the page of a time budget that runs out.
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    }
  });
  let answer: Fault = reply(200, searchEnvelope(UPSTREAM_RESULTS));
  const upstream = await startUpstream((request, res, req) => answer(request, res, req));
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-dialect-'));
  const clock = { now: Date.now() };
  const gateway: RunningGateway = await startGateway(
    {
      providers: {
        up: { type: 'searchgate-compatible', baseUrl: upstream.url, apiKey: 'upstream-secret-key', timeoutMs: 1000 },
        local: { type: 'local', directory, allowPrivateNetworks: true, ...local },
      },
      search: { chain: ['up'] },
      content: { chain: ['local'], timeBudgetMs: 5000 },
      retry: { retries: 0 },
      ...config,
    },
    { now: () => clock.now },
  );
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
    await site.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const accounts = gateway.gateway.services.accounts;
  let created = 0;
  /** A key of a new account (rate limits off unless given). */
  const accountKey = async (account: Partial<NewAccount> = {}): Promise<AccountKey> => {
    const { id } = await accounts.store.createAccount({ name: `client-${++created}`, ratePerSecond: 0, ratePerMinute: 0, ...account }, clock.now);
    const { key, record } = await accounts.createKey(id, 'test');
    return {
      key,
      accountId: id,
      deleteKey: async () => void (await accounts.store.deleteKey(record.id, clock.now)),
      disableAccount: async () => void (await accounts.store.updateAccount(id, { status: 'disabled' })),
    };
  };

  return {
    gateway,
    clock,
    upstream: {
      ...upstream,
      /** Sets what the search upstream answers from now on. */
      answer: (fault: Fault) => {
        answer = fault;
      },
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
    accountKey,
  };
}

export type SearchDialectBench = Awaited<ReturnType<typeof searchDialectBench>>;

/** The UTC day (YYYY-MM-DD) of an instant. */
export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** POST a JSON body with exactly these headers (no Authorization unless given). */
export const postJson = (gateway: RunningGateway, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** Every place a key could leak to: the log, /metrics. */
export async function leakSurfaces(gateway: RunningGateway): Promise<string> {
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  return `${gateway.logLines.join('\n')}\n${metrics}`;
}

const INDEXED_TEXT = 'PostgreSQL databases require periodic maintenance known as vacuuming. Autovacuum does it in the background.';
/** The one page of the embedded default's index. */
export const INDEXED_PAGE: IndexedPage = {
  url: 'https://docs.postgres.example/vacuum',
  canonicalUrl: 'https://docs.postgres.example/vacuum',
  title: 'Routine vacuuming',
  text: INDEXED_TEXT,
  datePublished: '2024-05-05T10:00:00.000Z',
  domain: 'docs.postgres.example',
  language: 'en',
  fetchedAt: '2026-11-01T00:00:00.000Z',
  contentHash: contentHash(INDEXED_TEXT),
};

/** A gateway whose search and content chains are the local index, holding INDEXED_PAGE. */
export async function embeddedDefaultGateway(t: ExecutionContext): Promise<RunningGateway> {
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-dialect-index-'));
  const index = await openLocalIndex(directory);
  await index.upsert([INDEXED_PAGE]);
  await index.close();
  const gateway = await startGateway({ providers: { local: { type: 'local', directory } }, search: { chain: ['local'] }, content: { chain: ['local'] } });
  t.teardown(async () => {
    await gateway.close();
    rmSync(directory, { recursive: true, force: true });
  });
  return gateway;
}
