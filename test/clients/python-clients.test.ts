/**
 * The vendors' own Python clients, unchanged but for base URL and key, against real searchgate gateways
 * (../shared/spec/dialects.md §6): cohere 7.3.1 and 5.21.1, langchain-cohere, voyageai, tavily-python,
 * exa-py, google-api-python-client, langchain-community and litellm, from the pinned venvs of
 * scripts/client-venvs.sh.
 *
 * Two gateways: the embedded default (the local index seeded with a few pages, the real embedded
 * reranker, the local content provider reading pages from a loopback site) and a configured upstream
 * chain (a loopback searchgate-compatible upstream for search and rerank, the same loopback site for
 * page content). On each, an account with a live key, a key deleted with `searchgate keys delete`, and
 * an account whose allowance is 0. The checks are Python (test/clients/run_checks.py and its
 * *_checks.py families): one interpreter per venv per gateway runs them all, in the before hook, and
 * prints one JSON line per check; each line is then asserted in its own test, with the Python side's
 * text as the message.
 *
 * Set SEARCHGATE_CLIENT_REPORT=<file> to have every check's JSON line (with its gateway and venv)
 * appended to that file, e.g. to tabulate a run.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { runCli } from '../helpers/cli.js';
import { indexedPage, writeLocalIndex } from '../helpers/dialect-bench.js';
import { REAL_LOCAL_RERANKER, searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig, type RunningGateway } from '../helpers/gateway.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const RUNNER = join(REPO, 'test/clients/run_checks.py');
const VENVS = ['clients', 'clients-cohere5'] as const;
type Venv = (typeof VENVS)[number];
const GATEWAYS = ['embedded default', 'upstream chain'] as const;
type GatewayName = (typeof GATEWAYS)[number];

/** Wall time of one Python process (all the checks of one venv on one gateway). */
const PROCESS_TIMEOUT_MS = 150_000;

// ---------------------------------------------------------------------------------------------------
// The fixture: the same pages behind both gateways.

const QUERY = 'postgresql vacuuming';
const DOMAIN = 'postgres.example';
const TEXT_PHRASE = 'periodic maintenance known as vacuuming';
const PAGE_PHRASE = 'rebuilt in 1887 after the great storm';

interface Page {
  url: string;
  title: string;
  text: string;
  datePublished: string | null;
}

const CORPUS: Page[] = [
  {
    url: 'https://docs.postgres.example/vacuum',
    title: 'Routine vacuuming',
    text: `PostgreSQL databases require ${TEXT_PHRASE}. ` + 'Autovacuum settings decide when tables are vacuumed. '.repeat(20),
    datePublished: '2024-05-05T10:00:00.000Z',
  },
  {
    url: 'https://blog.postgres.example/tuning',
    title: 'Tuning autovacuum',
    text: 'How to tune autovacuum thresholds for large PostgreSQL tables, and why vacuuming falls behind on busy systems.',
    datePublished: '2024-05-06T00:00:00.000Z',
  },
  { url: 'https://www.other.example/vacuum-cleaners', title: 'Best vacuum cleaners', text: 'Our review of vacuum cleaners for the home, with prices.', datePublished: null },
  { url: 'https://paris.example/', title: 'Paris', text: 'Paris is the capital and largest city of France, on the Seine.', datePublished: null },
];

const ARTICLE = `<!doctype html><html lang="en"><head><title>The lighthouse of Port Meridian</title>
<meta property="article:published_time" content="2024-02-03T04:05:06Z"></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> <a href="/contact">Contact</a></nav>
<article><h1>The lighthouse of Port Meridian</h1>
<p>The harbour lighthouse at Port Meridian was ${PAGE_PHRASE}, with a lens brought from Paris by ship.</p>
<p>Its keepers logged every passing vessel for ninety years, until the light was automated in 1977.</p>
<p>Today the tower is a museum, and the old logbooks can be read in the keeper's cottage beside it.</p>
</article><footer>Copyright 2024 Example Corp. All rights reserved. <a href="/privacy">Privacy</a></footer></body></html>`;

const STOP = new Set(['what', 'the', 'and', 'are', 'for', 'with', 'site']);
const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length >= 3 && !STOP.has(word));
const mentions = (text: string, word: string) => text.toLowerCase().includes(word.slice(0, 6));
const inDomain = (url: string, domain: string) => {
  const host = new URL(url).hostname;
  return host === domain || host.endsWith(`.${domain}`);
};

/** A searchgate-compatible upstream over CORPUS: word matches for search, word overlap for rerank. */
function upstreamHandler(request: { url: string; body: any }, res: import('node:http').ServerResponse) {
  const body = request.body ?? {};
  if (request.url === '/v1/web-search') {
    const terms = words(String(body.query ?? ''));
    const include: string[] = body.includeDomains ?? [];
    const exclude: string[] = body.excludeDomains ?? [];
    const maxCharacters: number | undefined = body.contents?.text?.max_characters;
    const hits = CORPUS.map((page) => ({ page, score: terms.filter((term) => mentions(`${page.title} ${page.text}`, term)).length }))
      .filter(({ page, score }) => score > 0 && (include.length === 0 || include.some((d) => inDomain(page.url, d))) && !exclude.some((d) => inDomain(page.url, d)))
      .sort((a, b) => b.score - a.score)
      .slice(0, Number(body.count ?? 10));
    const value = hits.map(({ page }) => ({
      name: page.title,
      url: page.url,
      snippet: page.text.slice(0, 160),
      ...(body.contents?.text ? { text: page.text.slice(0, maxCharacters ?? 100_000) } : {}),
      ...(page.datePublished ? { datePublished: page.datePublished } : {}),
    }));
    sendJson(res, 200, searchEnvelope(value, { totalEstimatedMatches: hits.length }));
  } else if (request.url === '/v1/rerank') {
    const terms = words(String(body.query ?? ''));
    const documents: unknown[] = body.documents ?? [];
    const results = documents
      .map((document, index) => {
        const text = typeof document === 'string' ? document : String((document as { text?: unknown })?.text ?? '');
        return { index, relevance_score: terms.length ? terms.filter((term) => mentions(text, term)).length / terms.length : 0 };
      })
      .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
      .slice(0, body.top_n ?? documents.length);
    sendJson(res, 200, { code: 200, log_id: 'upstream-log', msg: null, model: body.model, results });
  } else {
    sendJson(res, 404, { code: 404, log_id: 'upstream-log', msg: `no route ${request.url}` });
  }
}

// ---------------------------------------------------------------------------------------------------
// Gateways, keys, Python runs.

interface CheckLine {
  id: string;
  client: string;
  check: string;
  name: string;
  ok?: boolean;
  detail?: unknown;
  s?: number;
}

interface PythonRun {
  code: number | null;
  signal: string | null;
  stderr: string;
  ms: number;
  results: Map<string, CheckLine>;
  setupError?: string;
}

const temporary: string[] = [];
const tempDir = (prefix: string) => {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  temporary.push(directory);
  return directory;
};

function venvPythons(): Record<Venv, string> {
  const printed = execFileSync('bash', [join(REPO, 'scripts/client-venvs.sh'), '--print'], { encoding: 'utf8' });
  const found = Object.fromEntries(printed.trim().split('\n').map((line) => line.split(': ') as [string, string]));
  for (const venv of VENVS) if (!found[venv]) throw new Error(`scripts/client-venvs.sh --print named no ${venv} venv: ${printed}`);
  return found as Record<Venv, string>;
}

/** The environment of a Python run: nothing of ours leaks in (no proxies, no vendor keys). */
function pythonEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'SYSTEMROOT'];
  const env: NodeJS.ProcessEnv = {};
  for (const name of keep) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1', LITELLM_LOCAL_MODEL_COST_MAP: 'True', NO_PROXY: '127.0.0.1,localhost', ...extra };
}

// The checks each venv runs: listed by the Python side itself, so that the two never disagree.
let listError: string | undefined;
const listed = new Map<Venv, CheckLine[]>();
try {
  const pythons = venvPythons();
  for (const venv of VENVS) {
    const out = execFileSync(pythons[venv], [RUNNER, '--venv', venv, '--list'], { encoding: 'utf8', env: pythonEnv({}), timeout: 30_000 });
    listed.set(venv, out.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as CheckLine));
  }
} catch (error) {
  listError = `the Python client venvs are not ready (run: bash scripts/client-venvs.sh): ${String(error)}`;
}

/** Python processes still running: the after hook ends them (by their own pid) if the before hook gave up on them. */
const children = new Set<ChildProcess>();

function runPython(python: string, venv: Venv, env: Record<string, string>): Promise<PythonRun> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(python, [RUNNER, '--venv', venv], { env: pythonEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const results = new Map<string, CheckLine>();
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      let newline: number;
      while ((newline = stdout.indexOf('\n')) >= 0) {
        const line = stdout.slice(0, newline).trim();
        stdout = stdout.slice(newline + 1);
        if (!line) continue;
        try {
          const parsed = JSON.parse(line) as CheckLine;
          results.set(parsed.id, parsed);
        } catch {
          stderr += `[stdout, not JSON] ${line}\n`;
        }
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), PROCESS_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      children.delete(child);
      clearTimeout(timer);
      resolve({ code, signal, stderr, ms: Date.now() - started, results });
    });
    child.on('error', (error) => {
      children.delete(child);
      clearTimeout(timer);
      resolve({ code: null, signal: null, stderr: `${stderr}\n${String(error)}`, ms: Date.now() - started, results });
    });
  });
}

interface Keys {
  KEY: string;
  DELETED_KEY: string;
  EXHAUSTED_KEY: string;
}

/** A live key, a key deleted with `searchgate keys delete` (the CLI on the gateway's own store), an exhausted account's key. */
async function makeKeys(gateway: RunningGateway, configPath: string): Promise<Keys> {
  const { accounts } = gateway.gateway.services;
  const now = Date.now();
  const account = await accounts.store.createAccount({ name: 'clients', dailyAllowance: 1_000_000 }, now);
  const live = await accounts.createKey(account.id, 'live');
  const doomed = await accounts.createKey(account.id, 'to-delete');
  const deleted = await runCli(['keys', 'delete', `sg_${doomed.record.id}`], { env: { SEARCHGATE_CONFIG: configPath }, timeoutMs: 30_000 });
  if (deleted.code !== 0) throw new Error(`searchgate keys delete failed (${deleted.code}): ${deleted.stderr}${deleted.stdout}`);
  const check = (await accounts.store.listKeys({ accountId: account.id, includeDeleted: true })).find((key) => key.id === doomed.record.id);
  if (check?.deletedAt == null) throw new Error(`searchgate keys delete did not delete the key: ${deleted.stdout}`);
  const poor = await accounts.store.createAccount({ name: 'exhausted', dailyAllowance: 0 }, now);
  const exhausted = await accounts.createKey(poor.id, 'exhausted');
  return { KEY: live.key, DELETED_KEY: doomed.key, EXHAUSTED_KEY: exhausted.key };
}

const ACCOUNTS = (database: string) => ({ embedded: { path: database }, defaults: { ratePerSecond: 0, ratePerMinute: 0 } });

function accountsConfigFile(database: string): string {
  const configPath = join(tempDir('searchgate-clients-cli-'), 'config.yaml');
  writeFileSync(configPath, `accounts:\n  embedded: { path: ${JSON.stringify(database)} }\n`);
  return configPath;
}

const runs = new Map<string, PythonRun>();
const closers: Array<() => Promise<void>> = [];
let setupError: string | undefined;
let siteUrl = '';

test.before('start the gateways, make the keys, run the Python clients', async (t) => {
  t.timeout(PROCESS_TIMEOUT_MS + 90_000, 'two gateways and four Python processes of some 40 checks each');
  if (listError) return;
  try {
    const pythons = venvPythons();
    const site = await startUpstream((request, res) => {
      if (request.url === '/article') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(ARTICLE);
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      }
    });
    closers.push(site.close);
    siteUrl = site.url;

    // The embedded default: local index + embedded reranker + local content provider.
    const indexDirectory = await writeLocalIndex(tempDir('searchgate-clients-index-'), CORPUS.map(indexedPage));
    const embeddedDb = join(tempDir('searchgate-clients-accounts-'), 'accounts.db');
    const embedded = await startGateway({
      providers: { local: { type: 'local', directory: indexDirectory, allowPrivateNetworks: true }, 'local-reranker': REAL_LOCAL_RERANKER },
      content: { chain: ['local'] },
      accounts: ACCOUNTS(embeddedDb),
    });
    closers.push(embedded.close);

    // The configured upstream chain: a searchgate-compatible upstream, the loopback site for content.
    const upstream = await startUpstream(upstreamHandler);
    closers.push(upstream.close);
    const upstreamDb = join(tempDir('searchgate-clients-accounts-'), 'accounts.db');
    const chained = await startGateway({
      ...upstreamConfig(upstream.url),
      providers: {
        up: { type: 'searchgate-compatible', baseUrl: upstream.url, apiKey: 'upstream-secret-key' },
        local: { type: 'local', directory: tempDir('searchgate-clients-empty-index-'), allowPrivateNetworks: true },
      },
      content: { chain: ['local'] },
      accounts: ACCOUNTS(upstreamDb),
    });
    closers.push(chained.close);

    const gateways: Record<GatewayName, { gateway: RunningGateway; database: string }> = {
      'embedded default': { gateway: embedded, database: embeddedDb },
      'upstream chain': { gateway: chained, database: upstreamDb },
    };
    const jobs: Array<Promise<void>> = [];
    for (const name of GATEWAYS) {
      const { gateway, database } = gateways[name];
      const keys = await makeKeys(gateway, accountsConfigFile(database));
      const env = {
        BASE: gateway.url,
        ...keys,
        PAGE_URL: `${site.url}/article`,
        PAGE_PHRASE,
        BAD_URL: `${site.url}/missing`,
        QUERY,
        DOMAIN,
        TEXT_PHRASE,
      };
      for (const venv of VENVS) {
        jobs.push(
          runPython(pythons[venv], venv, env).then((run) => {
            runs.set(`${name}|${venv}`, run);
            t.log(`${name} / ${venv}: ${run.results.size} checks in ${(run.ms / 1000).toFixed(1)} s, exit ${run.code ?? run.signal}`);
          }),
        );
      }
    }
    await Promise.all(jobs);
    const report = process.env.SEARCHGATE_CLIENT_REPORT;
    if (report) {
      for (const [key, run] of runs) {
        for (const line of run.results.values()) appendFileSync(report, `${JSON.stringify({ gateway: key.split('|')[0], venv: key.split('|')[1], ...line })}\n`);
      }
    }
  } catch (error) {
    setupError = error instanceof Error ? (error.stack ?? error.message) : String(error);
  }
});

test.after.always('close the gateways', async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const close of closers.reverse()) await close().catch(() => {});
  for (const directory of temporary) rmSync(directory, { recursive: true, force: true });
});

const tail = (text: string, lines = 25) => text.trim().split('\n').slice(-lines).join('\n');

if (listError) {
  test('the Python client venvs are ready', (t) => {
    t.fail(listError);
  });
}

const titles = new Set<string>();
for (const gateway of GATEWAYS) {
  for (const venv of VENVS) {
    for (const entry of listed.get(venv) ?? []) {
      let title = `${gateway} › ${entry.client} › (${entry.check}) ${entry.name}`;
      if (titles.has(title)) title += ` [${entry.id}]`;
      titles.add(title);
      test(title, (t) => {
        if (setupError) return t.fail(`setup failed: ${setupError}`);
        const run = runs.get(`${gateway}|${venv}`);
        if (!run) return t.fail('the Python process was not run');
        const line = run.results.get(entry.id);
        if (!line) {
          return t.fail(
            `the Python process (${venv}) printed no line for ${entry.id}: exit ${run.code ?? run.signal} after ${run.ms} ms\n--- its stderr (tail) ---\n${tail(run.stderr)}`,
          );
        }
        const detail = typeof line.detail === 'string' ? line.detail : JSON.stringify(line.detail);
        t.true(line.ok, `${entry.id} on the ${gateway} gateway (${line.s} s): ${detail.split(siteUrl || '\u0000').join('SITE')}`);
      });
    }
  }
}
