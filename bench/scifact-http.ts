/**
 * The embedded default end to end over HTTP on SciFact: the previous pipeline against the new one,
 * built and served by the CLI as a user runs them, side by side in one run.
 *
 * - before: an index without vectors (`index add --no-vectors`) served with providers.local.vectorModel
 *   "none": BM25 candidates, the top 20 reranked by the gateway with the local reranker (search.rerank
 *   as configured by default).
 * - after: an index with vectors (`index add`'s default model), served with the default config: hybrid
 *   retrieval scored by the calibrated logistic model; the gateway does not rerank it, since the
 *   provider's results carry their relevance.
 *
 * Per arm: index build (wall, peak RSS, size on disk); nDCG@10 of POST /v1/web-search over SciFact's
 * judged train claims; p50/p95 at 1 client and at 8; the gateway's RSS; the load average around each
 * phase. The claims are those `searchgate calibrate` fits the reranker's calibration and the hybrid
 * weights on, so nDCG here is in-sample for both arms.
 *
 * On a shared 2-core machine the arms must see the same noise: both gateways run at once, each claim
 * goes to both back to back (the first arm alternating), and the 8-client phase alternates blocks of
 * claims between the arms. Each query phase starts fresh gateways warmed with corpus titles, never a
 * measured claim: the reranker keeps document embeddings keyed by their text (title and a snippet
 * that depends on the query), so a claim sent twice to one process would find its candidates already
 * embedded and flatter the before arm.
 *
 *   npm run bench:scifact                                     # every judged train claim
 *   node dist/bench/scifact-http.js --max-queries 100         # smoke run (bench/results/scifact-http-quick.json)
 *   node dist/bench/scifact-http.js --quick --arms after      # one arm alone
 *
 * Flags: --data DIR (../shared/data/scifact) --work-dir DIR (/tmp/searchgate-bench/scifact-http)
 *        --max-queries N --quick (100 queries) --arms before,after --out FILE --max-seconds S (3600)
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { asPage, ndcgAtCutoff, readJsonLines, readQrels, type BeirDocument, type BeirQuery } from '../src/cli/beir.js';
import { DEFAULT_HYBRID_WEIGHTS } from '../src/local/index/hybrid.js';
import { readModelDirectory } from '../src/local/rerank/model.js';
import { DEFAULT_RERANK_MODEL_DIRECTORY } from '../src/local/shared.js';
import { machineDescription, processMemory, startWatchdog } from './index-bench-common.js';
import { percentile } from './latency.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = resolve(REPO_ROOT, 'dist/src/cli/main.js');
const { values: flags } = parseArgs({
  options: {
    data: { type: 'string', default: '../shared/data/scifact' },
    'work-dir': { type: 'string', default: '/tmp/searchgate-bench/scifact-http' },
    'max-queries': { type: 'string' },
    quick: { type: 'boolean', default: false },
    arms: { type: 'string', default: 'before,after' },
    out: { type: 'string' },
    'max-seconds': { type: 'string', default: '3600' },
  },
});

const ARM_NAMES = ['before', 'after'] as const;
type ArmName = (typeof ARM_NAMES)[number];
const ARMS = flags.arms!.split(',').map((name) => name.trim()) as ArmName[];
for (const name of ARMS) if (!ARM_NAMES.includes(name)) throw new Error(`--arms: unknown arm "${name}" (expected ${ARM_NAMES.join(', ')})`);
const MAX_QUERIES = flags['max-queries'] !== undefined ? Number(flags['max-queries']) : flags.quick ? 100 : Number.POSITIVE_INFINITY;
if (!(MAX_QUERIES >= 1)) throw new Error('--max-queries must be a positive integer');
/** A partial run must not overwrite the published figures. */
const OUT = resolve(REPO_ROOT, flags.out ?? `bench/results/scifact-http${Number.isFinite(MAX_QUERIES) ? '-quick' : ''}.json`);
const DATA_DIRECTORY = resolve(REPO_ROOT, flags.data!);
const WORK_DIRECTORY = resolve(flags['work-dir']!);
const API_KEY = 'sk-bench-scifact-http';
const RESULTS_PER_QUERY = 10;
const WARM_UP_QUERIES = 20;
const CONCURRENT_CLIENTS = 8;
/** Claims per arm in one turn of the 8-client phase: long enough that ramp-up and drain are a small part. */
const CONCURRENT_BLOCK = CONCURRENT_CLIENTS * 20;
const TARGETS = { ndcgAt10: 0.74, oneClientP50Ms: 50, oneClientP95Ms: 100 };
const TIME_BINARY = '/usr/bin/time';

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const mib = (bytes: number) => round(bytes / 1_048_576, 1);
const loadAverage = () => os.loadavg().map((load) => round(load, 2));

// ---------------------------------------------------------------------------------------------
// SciFact

interface Collection {
  corpus: BeirDocument[];
  /** Judged train claims, in file order, at most MAX_QUERIES. */
  queries: BeirQuery[];
  qrels: ReturnType<typeof readQrels>;
}

const DATA_FILES = ['corpus.jsonl', 'queries-train.jsonl', 'qrels-train.tsv'] as const;

function readCollection(): Collection | null {
  if (DATA_FILES.some((file) => !existsSync(join(DATA_DIRECTORY, file)))) return null;
  const corpus = readJsonLines<BeirDocument>(join(DATA_DIRECTORY, 'corpus.jsonl'));
  const qrels = readQrels(join(DATA_DIRECTORY, 'qrels-train.tsv'));
  const queries = readJsonLines<BeirQuery>(join(DATA_DIRECTORY, 'queries-train.jsonl')).filter((query) => qrels.has(query._id));
  return { corpus, queries: queries.slice(0, Math.min(queries.length, MAX_QUERIES)), qrels };
}

/** The corpus as `index add` reads it, under the URLs `searchgate calibrate` uses; returns URL → document id. */
function writeCorpusJsonl(corpus: readonly BeirDocument[], path: string): Map<string, string> {
  const idByUrl = new Map<string, string>();
  const fetchedAt = new Date().toISOString();
  const lines = corpus.map((document) => {
    const page = asPage(document, fetchedAt);
    idByUrl.set(page.url, document._id);
    return JSON.stringify({ url: page.url, title: page.title, text: page.text, language: page.language, fetchedAt });
  });
  writeFileSync(path, `${lines.join('\n')}\n`);
  return idByUrl;
}

/** Corpus titles to warm a gateway with: real queries, but never a measured claim. */
function warmUpQueries(corpus: readonly BeirDocument[]): string[] {
  return Array.from({ length: WARM_UP_QUERIES }, (_, k) => corpus[Math.floor((k * corpus.length) / WARM_UP_QUERIES)]!.title);
}

// ---------------------------------------------------------------------------------------------
// The arms

interface Arm {
  name: ArmName;
  description: string;
  indexDirectory: string;
  indexAddFlags: string[];
  localProvider: Record<string, unknown>;
}

function armOf(name: ArmName): Arm {
  const indexDirectory = join(WORK_DIRECTORY, `${name}-index`);
  return name === 'before'
    ? {
        name,
        description: 'index without vectors; BM25, top 20 reranked by the gateway (search.rerank default)',
        indexDirectory,
        indexAddFlags: ['--no-vectors'],
        localProvider: { type: 'local', directory: indexDirectory, vectorModel: 'none' },
      }
    : {
        name,
        description: 'index with vectors; hybrid BM25 + ANN scored by the calibrated model, not reranked',
        indexDirectory,
        indexAddFlags: [],
        localProvider: { type: 'local', directory: indexDirectory },
      };
}

// ---------------------------------------------------------------------------------------------
// Index build

/** Allocated and apparent size of a directory, as du counts them. */
function diskUsage(directory: string): { allocatedBytes: number; apparentBytes: number } {
  const du = (...args: string[]) => Number(execFileSync('du', [...args, directory], { encoding: 'utf8' }).split('\t')[0]);
  return { allocatedBytes: du('-sk') * 1024, apparentBytes: du('-sb') };
}

interface BuildReport {
  seconds: number;
  peakRssMiB: number;
  peakRssFrom: string;
  diskMiB: number;
  apparentMiB: number;
  documents: number;
  vectors: Record<string, number>;
  /** The CLI's own summary: pages read, duplicates and skips, pages written, fold and embedding times. */
  summary: string[];
  loadAverage: { start: number[]; end: number[] };
}

const liveChildren = new Set<ChildProcess>();
// The watchdog and errors end this process with process.exit: no gateway or build may outlive it.
process.on('exit', () => liveChildren.forEach((child) => child.kill('SIGKILL')));

function track(child: ChildProcess): ChildProcess {
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
  return child;
}

async function buildIndex(arm: Arm, corpusPath: string): Promise<BuildReport> {
  rmSync(arm.indexDirectory, { recursive: true, force: true });
  const command = [CLI, 'index', 'add', '--dir', arm.indexDirectory, ...arm.indexAddFlags, corpusPath];
  console.log(`$ node ${command.slice(1).join(' ')}`);
  // /usr/bin/time reads the child's peak RSS from wait4, which no sampling can miss.
  const timeFile = join(WORK_DIRECTORY, `${arm.name}-index-add.time`);
  const timed = existsSync(TIME_BINARY);
  const [file, args] = timed ? [TIME_BINARY, ['-f', '%M', '-o', timeFile, process.execPath, ...command]] : [process.execPath, command];
  const start = loadAverage();
  const started = performance.now();
  const child = track(
    spawn(file, args, { cwd: REPO_ROOT, env: { ...process.env, SEARCHGATE_PROGRESS_INTERVAL_MS: '15000' }, stdio: ['ignore', 'inherit', 'pipe'] }),
  );
  const summary: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    console.log(`  ${line}`);
    if (!/^index: [\d,]+ pages,/.test(line)) summary.push(line);
  });
  let sampledPeak = 0;
  const sampler = timed ? null : setInterval(() => (sampledPeak = Math.max(sampledPeak, processMemory(child.pid!)?.peak ?? 0)), 200);
  const [code] = (await once(child, 'exit')) as [number | null];
  if (sampler) clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`index add (${arm.name}) exited with ${code}`);
  const peakRss = timed ? Number(readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)) * 1024 : sampledPeak;
  const disk = diskUsage(arm.indexDirectory);
  const stats = JSON.parse(execFileSync(process.execPath, [CLI, 'index', 'stats', '--json', '--dir', arm.indexDirectory], { cwd: REPO_ROOT, encoding: 'utf8' })) as {
    documents: number;
    vectors: Record<string, number>;
  };
  return {
    seconds: round(seconds),
    peakRssMiB: mib(peakRss),
    peakRssFrom: timed ? `${TIME_BINARY} %M` : '/proc VmHWM sampled every 200 ms',
    diskMiB: mib(disk.allocatedBytes),
    apparentMiB: mib(disk.apparentBytes),
    documents: stats.documents,
    vectors: stats.vectors,
    summary,
    loadAverage: { start, end: loadAverage() },
  };
}

// ---------------------------------------------------------------------------------------------
// A gateway per arm

interface Gateway {
  arm: Arm;
  url: string;
  pid: number;
  /** Warnings and errors it logged, by message, with how often. */
  warnings: Map<string, number>;
  exit(): string | null;
  stop(): Promise<void>;
}

async function startGateway(arm: Arm): Promise<Gateway> {
  const configPath = join(WORK_DIRECTORY, `${arm.name}-gateway.json`);
  writeFileSync(
    configPath,
    JSON.stringify({
      server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 600_000 },
      // The production default: one access-log line per request is part of the price.
      logging: { level: 'info' },
      providers: { local: arm.localProvider },
      search: { chain: ['local'] },
      content: { chain: ['local'] },
      // Every claim is asked more than once: a response cache would answer the repeats.
      cache: { enabled: false },
      accounts: { embedded: { path: join(WORK_DIRECTORY, `${arm.name}-accounts.db`) } },
      dashboard: { enabled: false },
      mcp: { enabled: false },
    }),
  );
  const child = track(
    spawn(process.execPath, [CLI, 'serve'], {
      cwd: REPO_ROOT,
      env: { ...process.env, SEARCHGATE_CONFIG: configPath, SEARCHGATE_API_KEYS: API_KEY, PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const warnings = new Map<string, number>();
  let exit: string | null = null;
  child.once('exit', (code, signal) => (exit = `exited with ${signal ?? `code ${code}`}`));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${arm.name} gateway did not start within 120 s`)), 120_000);
    child.once('exit', (code) => reject(new Error(`the ${arm.name} gateway exited (code ${code}) before it listened`)));
    // Every line is read, also after the start: a full pipe would block the server's log writes.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: { msg?: string; level?: string; address?: string; reason?: string };
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (entry.level === 'warn' || entry.level === 'error') {
        const key = entry.reason ? `${entry.msg} (${entry.reason})` : entry.msg ?? line;
        if (!warnings.has(key)) process.stderr.write(`${arm.name} gateway: ${line}\n`);
        warnings.set(key, (warnings.get(key) ?? 0) + 1);
      }
      if (entry.msg === 'listening' && entry.address) {
        clearTimeout(timer);
        resolveUrl(entry.address);
      }
    });
  });
  // Ready means the index is open and the model loaded, not merely listening.
  for (let attempt = 0; !(await fetch(`${url}/readyz`).then((response) => response.ok, () => false)); attempt++) {
    if (attempt > 1200) throw new Error(`the ${arm.name} gateway was not ready within 120 s`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  return {
    arm,
    url,
    pid: child.pid!,
    warnings,
    exit: () => exit,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.kill('SIGTERM');
      await once(child, 'exit');
      clearTimeout(kill);
    },
  };
}

interface SearchAnswer {
  ids: string[];
  /** Result URLs that are not corpus documents: should stay 0. */
  unmapped: number;
  ms: number;
}

async function search(gateway: Gateway, query: string, idByUrl: ReadonlyMap<string, string>): Promise<SearchAnswer> {
  const started = performance.now();
  const response = await fetch(`${gateway.url}/v1/web-search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, count: RESULTS_PER_QUERY }),
  }).catch((error: Error) => {
    throw new Error(`POST ${gateway.url}/v1/web-search failed (${error.message}); the ${gateway.arm.name} gateway ${gateway.exit() ?? 'is running'}`);
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`the ${gateway.arm.name} gateway answered ${response.status}: ${text.slice(0, 500)}`);
  const urls = (JSON.parse(text) as { data: { webPages: { value: Array<{ url: string }> } } }).data.webPages.value.map((result) => result.url);
  const ids = urls.flatMap((url) => idByUrl.get(url) ?? []);
  return { ids, unmapped: urls.length - ids.length, ms };
}

/** The local reranker's counters from /metrics, summed over providers: whether, and how much, the gateway reranked. */
async function rerankerCounters(gateway: Gateway) {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const sum = (name: string) =>
    [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce((total, match) => total + Number(match[1]), 0);
  return {
    documents: sum('searchgate_local_reranker_documents_total'),
    windows: sum('searchgate_local_reranker_windows_total'),
    cachedWindows: sum('searchgate_local_reranker_cached_windows_total'),
  };
}

function gatewayMemory(gateway: Gateway) {
  const memory = processMemory(gateway.pid);
  return { rssMiB: mib(memory?.rss ?? 0), peakRssMiB: mib(memory?.peak ?? 0) };
}

async function startGateways(arms: readonly Arm[], warmUp: readonly string[], idByUrl: ReadonlyMap<string, string>): Promise<Gateway[]> {
  const gateways: Gateway[] = [];
  for (const arm of arms) gateways.push(await startGateway(arm));
  for (const gateway of gateways) for (const query of warmUp) await search(gateway, query, idByUrl);
  return gateways;
}

// ---------------------------------------------------------------------------------------------
// Measurement

function latencyFigures(samples: readonly number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { queries: sorted.length, p50Ms: round(percentile(sorted, 0.5)), p95Ms: round(percentile(sorted, 0.95)), maxMs: round(sorted.at(-1) ?? Number.NaN) };
}

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

interface PhaseArmReport {
  ndcgAt10: number;
  latency: ReturnType<typeof latencyFigures> & { queriesPerSecond?: number };
  unmappedResults: number;
  reranker: Awaited<ReturnType<typeof rerankerCounters>>;
  gateway: ReturnType<typeof gatewayMemory>;
  warnings: Record<string, number>;
}

interface OneClientPhase {
  arms: Partial<Record<ArmName, PhaseArmReport>>;
  /** Median over claims of after ÷ before on the same claim, back to back: the figure least moved by neighbours' load. */
  pairedLatencyRatio: number | null;
  perQuery: Array<{ queryId: string } & Partial<Record<ArmName, { ndcgAt10: number; ms: number }>>>;
  loadAverage: { start: number[]; end: number[] };
}

/** Every claim to every arm, one at a time, back to back, the first arm alternating: quality and 1-client latency. */
async function oneClientPhase(gateways: readonly Gateway[], collection: Collection, idByUrl: ReadonlyMap<string, string>): Promise<OneClientPhase> {
  const start = loadAverage();
  const perQuery: OneClientPhase['perQuery'] = [];
  const unmapped = new Map<ArmName, number>();
  for (const [i, query] of collection.queries.entries()) {
    const row: OneClientPhase['perQuery'][number] = { queryId: query._id };
    for (const gateway of i % 2 === 0 ? gateways : [...gateways].reverse()) {
      const answer = await search(gateway, query.text, idByUrl);
      row[gateway.arm.name] = { ndcgAt10: ndcgAtCutoff(answer.ids, collection.qrels.get(query._id)!), ms: round(answer.ms, 2) };
      unmapped.set(gateway.arm.name, (unmapped.get(gateway.arm.name) ?? 0) + answer.unmapped);
    }
    perQuery.push(row);
    if ((i + 1) % 100 === 0) console.log(`  1 client: ${i + 1}/${collection.queries.length} claims`);
  }
  const end = loadAverage();
  const arms: OneClientPhase['arms'] = {};
  for (const gateway of gateways) {
    const rows = perQuery.map((row) => row[gateway.arm.name]!);
    arms[gateway.arm.name] = {
      ndcgAt10: round(mean(rows.map((row) => row.ndcgAt10)), 5),
      latency: latencyFigures(rows.map((row) => row.ms)),
      unmappedResults: unmapped.get(gateway.arm.name) ?? 0,
      reranker: await rerankerCounters(gateway),
      gateway: gatewayMemory(gateway),
      warnings: Object.fromEntries(gateway.warnings),
    };
  }
  const paired = perQuery.filter((row) => row.before && row.after).map((row) => row.after!.ms / row.before!.ms);
  return {
    arms,
    pairedLatencyRatio: paired.length > 0 ? round(percentile(paired.sort((a, b) => a - b), 0.5), 3) : null,
    perQuery,
    loadAverage: { start, end },
  };
}

interface ConcurrentPhase {
  clients: number;
  arms: Partial<Record<ArmName, PhaseArmReport>>;
  loadAverage: { start: number[]; end: number[] };
}

/** Every claim to every arm over 8 clients, the arms taking turns by blocks of claims. */
async function concurrentPhase(gateways: readonly Gateway[], collection: Collection, idByUrl: ReadonlyMap<string, string>): Promise<ConcurrentPhase> {
  const start = loadAverage();
  const samples = new Map<ArmName, number[]>(gateways.map((gateway) => [gateway.arm.name, []]));
  const ndcg = new Map<ArmName, number[]>(gateways.map((gateway) => [gateway.arm.name, []]));
  const unmapped = new Map<ArmName, number>();
  const busySeconds = new Map<ArmName, number>();
  for (let from = 0, turn = 0; from < collection.queries.length; from += CONCURRENT_BLOCK, turn++) {
    const block = collection.queries.slice(from, from + CONCURRENT_BLOCK);
    for (const gateway of turn % 2 === 0 ? gateways : [...gateways].reverse()) {
      const name = gateway.arm.name;
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENT_CLIENTS }, async () => {
          while (next < block.length) {
            const query = block[next++]!;
            const answer = await search(gateway, query.text, idByUrl);
            samples.get(name)!.push(answer.ms);
            ndcg.get(name)!.push(ndcgAtCutoff(answer.ids, collection.qrels.get(query._id)!));
            unmapped.set(name, (unmapped.get(name) ?? 0) + answer.unmapped);
          }
        }),
      );
      busySeconds.set(name, (busySeconds.get(name) ?? 0) + (performance.now() - started) / 1000);
    }
  }
  const end = loadAverage();
  const arms: ConcurrentPhase['arms'] = {};
  for (const gateway of gateways) {
    const name = gateway.arm.name;
    arms[name] = {
      // Under load the before arm's reranking may overrun its time budget and keep BM25's order.
      ndcgAt10: round(mean(ndcg.get(name)!), 5),
      latency: { ...latencyFigures(samples.get(name)!), queriesPerSecond: round(samples.get(name)!.length / busySeconds.get(name)!) },
      unmappedResults: unmapped.get(name) ?? 0,
      reranker: await rerankerCounters(gateway),
      gateway: gatewayMemory(gateway),
      warnings: Object.fromEntries(gateway.warnings),
    };
  }
  return { clients: CONCURRENT_CLIENTS, arms, loadAverage: { start, end } };
}

async function withGateways<T>(arms: readonly Arm[], warmUp: readonly string[], idByUrl: ReadonlyMap<string, string>, work: (gateways: Gateway[]) => Promise<T>) {
  const gateways = await startGateways(arms, warmUp, idByUrl);
  try {
    return await work(gateways);
  } finally {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
  }
}

// ---------------------------------------------------------------------------------------------
// Report

/** When dist/ was built: another engineer may rebuild it while this runs, and a gateway started after that runs other code. */
function builtAt(): string | null {
  try {
    return statSync(resolve(REPO_ROOT, 'dist/src/local/index/hybrid.js')).mtime.toISOString();
  } catch {
    return null;
  }
}

function sourceRevision(): { commit: string; uncommittedChanges: boolean } | null {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    return { commit: git('rev-parse', 'HEAD'), uncommittedChanges: git('status', '--porcelain', '--untracked-files=no') !== '' };
  } catch {
    return null;
  }
}

function embeddingModel() {
  const { spec } = readModelDirectory(resolve(REPO_ROOT, DEFAULT_RERANK_MODEL_DIRECTORY));
  return { directory: DEFAULT_RERANK_MODEL_DIRECTORY, id: spec.id, retrievalWeights: spec.retrieval ?? { defaults: DEFAULT_HYBRID_WEIGHTS } };
}

interface Row {
  label: string;
  values: Partial<Record<ArmName, number | undefined>>;
  unit?: string;
}

function markdownTable(rows: readonly Row[]): string {
  const cell = (value: number | undefined, unit = '') => (value === undefined || Number.isNaN(value) ? '—' : `${value}${unit}`);
  const lines = ['| | before | after | after÷before |', '|---|---:|---:|---:|'];
  for (const { label, values, unit } of rows) {
    const { before, after } = values;
    const ratio = before !== undefined && after !== undefined && before !== 0 ? round(after / before, 2) : undefined;
    lines.push(`| ${label} | ${cell(before, unit)} | ${cell(after, unit)} | ${cell(ratio, '×')} |`);
  }
  return lines.join('\n');
}

function byArm<T>(reports: Partial<Record<ArmName, T>>, pick: (report: T) => number): Partial<Record<ArmName, number>> {
  return Object.fromEntries(Object.entries(reports).map(([name, report]) => [name, pick(report as T)]));
}

async function main(): Promise<void> {
  startWatchdog(Number(flags['max-seconds']), 'scifact-http');
  const benchStarted = performance.now();
  const collection = readCollection();
  if (!collection) {
    console.log(`scifact-http: skipped: ${DATA_DIRECTORY} lacks ${DATA_FILES.join(', ')} (pass --data DIR)`);
    return;
  }
  const machine = machineDescription();
  const distBuiltAt: Record<string, string | null> = { start: builtAt() };
  const model = embeddingModel();
  mkdirSync(WORK_DIRECTORY, { recursive: true });
  const corpusPath = join(WORK_DIRECTORY, 'corpus.jsonl');
  const idByUrl = writeCorpusJsonl(collection.corpus, corpusPath);
  const arms = ARMS.map(armOf);
  const warmUp = warmUpQueries(collection.corpus);
  console.log(`scifact-http: ${collection.corpus.length} documents, ${collection.queries.length} judged train claims, arms ${ARMS.join(', ')}`);

  const builds: Partial<Record<ArmName, BuildReport>> = {};
  for (const arm of arms) {
    builds[arm.name] = await buildIndex(arm, corpusPath);
    console.log(`${arm.name}: ${JSON.stringify({ ...builds[arm.name], summary: undefined })}`);
  }

  distBuiltAt.oneClient = builtAt();
  console.log('quality and latency at 1 client');
  const oneClient = await withGateways(arms, warmUp, idByUrl, (gateways) => oneClientPhase(gateways, collection, idByUrl));
  console.log(`  ${JSON.stringify({ ...oneClient, perQuery: undefined })}`);
  distBuiltAt.concurrent = builtAt();
  console.log(`latency at ${CONCURRENT_CLIENTS} clients (fresh gateways)`);
  const concurrent = await withGateways(arms, warmUp, idByUrl, (gateways) => concurrentPhase(gateways, collection, idByUrl));
  console.log(`  ${JSON.stringify(concurrent)}`);

  const after = oneClient.arms.after;
  const targets = after
    ? {
        ndcgAt10: { target: TARGETS.ndcgAt10, got: after.ndcgAt10, met: after.ndcgAt10 >= TARGETS.ndcgAt10 },
        oneClientP50Ms: { target: TARGETS.oneClientP50Ms, got: after.latency.p50Ms, met: after.latency.p50Ms <= TARGETS.oneClientP50Ms },
        oneClientP95Ms: { target: TARGETS.oneClientP95Ms, got: after.latency.p95Ms, met: after.latency.p95Ms <= TARGETS.oneClientP95Ms },
      }
    : null;
  const benchSeconds = round((performance.now() - benchStarted) / 1000);
  distBuiltAt.end = builtAt();
  const distRebuilt = new Set(Object.values(distBuiltAt)).size > 1;
  const report = {
    benchmark: 'scifact-http',
    date: new Date().toISOString(),
    command: `node ${process.argv.slice(1).map((arg) => (arg.startsWith('/') ? arg.replace(`${REPO_ROOT}/`, '') : arg)).join(' ')}`,
    machine,
    source: { ...sourceRevision(), distBuiltAt, distRebuiltDuringRun: distRebuilt },
    data: { directory: DATA_DIRECTORY, documents: collection.corpus.length, queries: collection.queries.length, split: 'train (judged claims)' },
    embeddingModel: model,
    arms: Object.fromEntries(arms.map((arm) => [arm.name, { description: arm.description, indexAddFlags: arm.indexAddFlags, localProvider: arm.localProvider }])),
    builds,
    oneClient,
    concurrent,
    targets,
    benchSeconds,
    loadAverageAtEnd: loadAverage(),
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);

  const rows: Row[] = [
    { label: 'index add wall (s)', values: byArm(builds, (build) => build.seconds) },
    { label: 'index add peak RSS (MiB)', values: byArm(builds, (build) => build.peakRssMiB) },
    { label: 'index on disk (MiB)', values: byArm(builds, (build) => build.diskMiB) },
    { label: 'nDCG@10', values: byArm(oneClient.arms, (arm) => arm.ndcgAt10) },
    { label: 'p50 1 client (ms)', values: byArm(oneClient.arms, (arm) => arm.latency.p50Ms) },
    { label: 'p95 1 client (ms)', values: byArm(oneClient.arms, (arm) => arm.latency.p95Ms) },
    { label: `p50 ${CONCURRENT_CLIENTS} clients (ms)`, values: byArm(concurrent.arms, (arm) => arm.latency.p50Ms) },
    { label: `p95 ${CONCURRENT_CLIENTS} clients (ms)`, values: byArm(concurrent.arms, (arm) => arm.latency.p95Ms) },
    { label: `queries/s ${CONCURRENT_CLIENTS} clients`, values: byArm(concurrent.arms, (arm) => arm.latency.queriesPerSecond ?? Number.NaN) },
    { label: `nDCG@10 under ${CONCURRENT_CLIENTS} clients`, values: byArm(concurrent.arms, (arm) => arm.ndcgAt10) },
    { label: 'gateway RSS after 1 client (MiB)', values: byArm(oneClient.arms, (arm) => arm.gateway.rssMiB) },
    { label: `gateway RSS after ${CONCURRENT_CLIENTS} clients (MiB)`, values: byArm(concurrent.arms, (arm) => arm.gateway.rssMiB) },
    { label: `gateway peak RSS after ${CONCURRENT_CLIENTS} clients (MiB)`, values: byArm(concurrent.arms, (arm) => arm.gateway.peakRssMiB) },
    { label: 'documents reranked by the gateway (1 client)', values: byArm(oneClient.arms, (arm) => arm.reranker.documents) },
  ];
  const check = (met: boolean) => (met ? '✓' : '✗');
  console.log(
    [
      '',
      `## SciFact over HTTP: ${collection.queries.length} judged train claims, ${collection.corpus.length} documents`,
      '',
      markdownTable(rows),
      '',
      oneClient.pairedLatencyRatio !== null ? `Paired 1-client latency, median of after ÷ before on the same claim: ${oneClient.pairedLatencyRatio}×.` : '',
      targets
        ? `Targets (after, 1 client): nDCG@10 ≥ ${TARGETS.ndcgAt10} ${check(targets.ndcgAt10.met)} (${targets.ndcgAt10.got}), ` +
          `p50 ≤ ${TARGETS.oneClientP50Ms} ms ${check(targets.oneClientP50Ms.met)} (${targets.oneClientP50Ms.got}), ` +
          `p95 ≤ ${TARGETS.oneClientP95Ms} ms ${check(targets.oneClientP95Ms.met)} (${targets.oneClientP95Ms.got}).`
        : 'Targets: not checked (the after arm did not run).',
      `Embedding model ${model.id}, hybrid weights ${'defaults' in model.retrievalWeights ? 'the defaults (not calibrated)' : 'fitted'}.`,
      `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}; load ${machine.loadAverageAtStart.join(' ')} at start, ` +
        `${oneClient.loadAverage.start.join(' ')} → ${oneClient.loadAverage.end.join(' ')} (1 client), ` +
        `${concurrent.loadAverage.start.join(' ')} → ${concurrent.loadAverage.end.join(' ')} (${CONCURRENT_CLIENTS} clients).`,
      distRebuilt ? `**dist/ was rebuilt during the run (build time at each phase's start: ${JSON.stringify(distBuiltAt)}): phases may not have run the same code.**` : '',
      `Bench wall time ${benchSeconds} s. Full report: ${OUT}`,
    ]
      .filter((line, i, lines) => line !== '' || lines[i - 1] !== '')
      .join('\n'),
  );
}

await main();
// Open sockets of the fetch pool would keep the process up a few more seconds.
process.exit(0);
