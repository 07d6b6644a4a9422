/**
 * Speed of the embedded reranker through the HTTP API: fp32 against int8 side by side in one run,
 * each with every document unseen (cold) and with the same documents again (seen), p50/p95 per
 * request and their ratios. Targets (issue 17, 2 cores): 50 documents × 250 words in p50 ≤ 1.5 s
 * cold and ≤ 100 ms seen, with the default (int8) model.
 *
 * Inputs: one request = one query and --documents documents of --words words. Documents are real
 * scientific abstracts from ../shared/data/scifact/corpus.jsonl (title + text, continued into the
 * next unused abstract when short, cut at --words words) and queries are SciFact claims. No document
 * occurs in two requests, so a cold request finds nothing in a gateway's embedding cache; its seen
 * twin is the same query and documents sent again right after (the response cache is off, so the
 * query is embedded and the scores computed again; only the documents' embeddings are reused).
 * Without the SciFact folder, seeded text from a fixed English vocabulary.
 *
 * Arms: one `searchgate serve` process per model (its own event loop and workers, as deployed), each
 * with the provider's defaults unless the arm says otherwise. Every round sends one request cold to
 * every arm, then seen to every arm, the first arm of each phase rotating, so drift and neighbours'
 * load fall on all arms alike. Each request's latency is paired with the other arms' on the same
 * request; the median pair ratio is the figure to compare on a shared machine.
 *
 * Checks (the run fails, exit 1, when one does not hold): every seen answer has the cold answer's
 * scores (the cache returns what the model computed); each gateway's metrics count the seen
 * requests' windows as cached.
 *
 *   npm run bench:rerank-speed                       # 20 requests × 50 documents × 250 words
 *   node dist/bench/rerank-speed.js --requests 4     # smoke run (JSON under bench/results/quick.tmp/)
 *   node dist/bench/rerank-speed.js --arm fp32=models/all-minilm-l6-v2-fp32 \
 *     --arm int8=models/all-minilm-l6-v2 --arm 'int8-1x2=models/all-minilm-l6-v2,workers=1,threads=2,maxBatchTokens=8192'
 *
 * Flags: --arm LABEL=DIR[,option=value…] (repeatable; options: workers, threads, maxBatchTokens,
 *        embeddingCacheBytes; default fp32=models/all-minilm-l6-v2-fp32 int8=models/all-minilm-l6-v2)
 *        --requests N (20) --documents D (50) --words W (250) --warmup K (2 requests per arm)
 *        --data DIR (../shared/data/scifact) --seed S (1) --out FILE (bench/results/rerank-speed.json)
 *        --max-seconds S (1800) --target-arm LABEL (int8)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Tokenizer } from '@huggingface/tokenizers';
import { readModelDirectory, type RerankModelSpec } from '../src/local/rerank/model.js';
import type { ScoringJob } from '../src/local/rerank/scoring.js';
import { seededRandom } from '../src/util/random.js';
import { machineDescription, startWatchdog } from './index-bench-common.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { values: flags } = parseArgs({
  options: {
    arm: { type: 'string', multiple: true },
    requests: { type: 'string', default: '20' },
    documents: { type: 'string', default: '50' },
    words: { type: 'string', default: '250' },
    warmup: { type: 'string', default: '2' },
    data: { type: 'string', default: '../shared/data/scifact' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string' },
    'max-seconds': { type: 'string', default: '1800' },
    'target-arm': { type: 'string', default: 'int8' },
  },
});
const positiveInteger = (name: keyof typeof flags): number => {
  const value = Number(flags[name]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
};
const REQUESTS = positiveInteger('requests');
const DOCUMENTS = positiveInteger('documents');
const WORDS = positiveInteger('words');
const WARMUP = positiveInteger('warmup');
const SEED = positiveInteger('seed');
const DATA_DIRECTORY = resolve(REPO_ROOT, flags.data!);
/** Fewer than the default requests is a smoke run: its figures must not overwrite the published ones. */
const OUT = resolve(REPO_ROOT, flags.out ?? (REQUESTS < 20 ? 'bench/results/quick.tmp/rerank-speed.json' : 'bench/results/rerank-speed.json'));
const DEFAULT_ARMS = ['fp32=models/all-minilm-l6-v2-fp32', 'int8=models/all-minilm-l6-v2'];
const TARGETS = { coldP50Ms: 1500, seenP50Ms: 100 };
const BENCH_KEY = 'sk-bench-rerank-0123456789';
/** Calibrated scores of a seen answer may differ from the cold one's by this much (JSON round trip). */
const SCORE_TOLERANCE = 1e-9;
/**
 * A block counts as quiet when other processes kept at most this many CPUs busy meanwhile. ONNX
 * Runtime uses every core, so any neighbour slows the arm it meets.
 */
const QUIET_OTHER_CORES = 0.15;
const ARM_OPTIONS = ['workers', 'threads', 'maxBatchTokens', 'embeddingCacheBytes'] as const;

interface ArmSpec {
  label: string;
  directory: string;
  options: Partial<Record<(typeof ARM_OPTIONS)[number], number>>;
}

function parseArm(value: string): ArmSpec {
  const [head, ...rest] = value.split(',');
  const split = head!.indexOf('=');
  if (split <= 0) throw new Error(`--arm ${value}: expected LABEL=DIR[,option=value…]`);
  const options: ArmSpec['options'] = {};
  for (const item of rest) {
    const [key, raw] = item.split('=');
    if (!(ARM_OPTIONS as readonly string[]).includes(key!) || !Number.isInteger(Number(raw))) {
      throw new Error(`--arm ${value}: "${item}" is not one of ${ARM_OPTIONS.join(', ')} = an integer`);
    }
    options[key as (typeof ARM_OPTIONS)[number]] = Number(raw);
  }
  return { label: head!.slice(0, split), directory: resolve(REPO_ROOT, head!.slice(split + 1)), options };
}

// ---------------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------------

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

interface TextSource {
  name: string;
  /** Word lists of whole texts, in a seeded order; documents are cut from them front to back. */
  passages: string[][];
  queries: string[];
}

function scifactSource(directory: string, random: () => number): TextSource | null {
  const corpus = join(directory, 'corpus.jsonl');
  const queries = join(directory, 'queries-train.jsonl');
  if (!existsSync(corpus) || !existsSync(queries)) return null;
  const lines = (path: string) =>
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as { title?: string; text: string });
  return {
    name: `SciFact abstracts and claims (${relative(REPO_ROOT, directory)})`,
    passages: shuffled(lines(corpus), random).map(({ title, text }) => `${title ? `${title}. ` : ''}${text}`.split(/\s+/).filter(Boolean)),
    queries: shuffled(
      lines(queries).map(({ text }) => text),
      random,
    ),
  };
}

// Common English words, so that the tokenizer sees ordinary word pieces rather than rare splits.
const VOCABULARY = (
  'the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you ' +
  'were her she there been one all we their has would when if so no more can out other into some could time these ' +
  'two may first then do any like my now over such our man me even most made after also did many before must ' +
  'through back years where much your way well down should because each just those people how too little state good ' +
  'very make world still own see men work long get here between both life being under never day same another know ' +
  'while last might us great old year off come since against go came right used take three system water house ' +
  'program during without place around however home small found thought went part general high upon school every ' +
  'does got united left number course war until always away something fact though less public put thing almost ' +
  'hand enough far took head yet government city study research results data method analysis model patients cells ' +
  'protein effect increase treatment group level response human gene expression disease risk clinical cancer'
).split(' ');

function generatedSource(random: () => number, documents: number, requests: number): TextSource {
  const pick = () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]!;
  const sentence = (minimum: number, spread: number) => {
    const words = Array.from({ length: minimum + Math.floor(random() * spread) }, pick);
    words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1);
    words[words.length - 1] += '.';
    return words;
  };
  const passageWords = () => Array.from({ length: 1 + Math.ceil(WORDS / 15) }, () => sentence(8, 14)).flat();
  return {
    name: `generated English (fixed ${VOCABULARY.length}-word vocabulary, seeded)`,
    passages: Array.from({ length: documents }, passageWords),
    queries: Array.from({ length: requests }, () => sentence(5, 6).join(' ')),
  };
}

/** Requests whose documents are all different texts with no passage in common (every cold request is cold). */
function buildRequests(source: TextSource, count: number): ScoringJob[] {
  const documents: string[] = [];
  let next = 0;
  while (documents.length < count * DOCUMENTS && next < source.passages.length) {
    const words: string[] = [];
    while (words.length < WORDS && next < source.passages.length) words.push(...source.passages[next++]!);
    if (words.length >= WORDS) documents.push(words.slice(0, WORDS).join(' '));
  }
  const most = Math.min(Math.floor(documents.length / DOCUMENTS), source.queries.length);
  if (most < count) {
    throw new Error(`${source.name} yields ${documents.length} distinct documents and ${source.queries.length} queries: at most ${most} requests (warm-up included) of ${DOCUMENTS} documents`);
  }
  return Array.from({ length: count }, (_, i) => ({ query: source.queries[i]!, documents: documents.slice(i * DOCUMENTS, (i + 1) * DOCUMENTS) }));
}

/** Tokens and windows per document as the model cuts them (special tokens included). */
function tokenStatistics(directory: string, spec: RerankModelSpec, requests: readonly ScoringJob[]) {
  const tokenizer = new Tokenizer(
    JSON.parse(readFileSync(join(directory, 'tokenizer.json'), 'utf8')),
    JSON.parse(readFileSync(join(directory, 'tokenizer_config.json'), 'utf8')),
  );
  const size = spec.maxTokens - 2;
  const stride = size - spec.windowOverlapTokens;
  let tokens = 0;
  let windows = 0;
  let windowTokens = 0;
  let documents = 0;
  for (const request of requests) {
    for (const document of request.documents) {
      const length = tokenizer.tokenize(spec.documentPrefix + document).length;
      const count = length <= size ? 1 : Math.ceil((length - size) / stride) + 1;
      documents++;
      tokens += length;
      windows += count;
      windowTokens += length + (count - 1) * spec.windowOverlapTokens + 2 * count;
    }
  }
  return { tokensPerDocument: round1(tokens / documents), windowsPerDocument: round3(windows / documents), modelTokensPerRequest: Math.round(windowTokens / requests.length) };
}

// ---------------------------------------------------------------------------------------------------
// Gateways
// ---------------------------------------------------------------------------------------------------

interface Gateway {
  url: string;
  pid: number;
  startSeconds: number;
  /** duration_ms of each POST /v1/rerank from the access log, in the order answered. */
  rerankDurationsMs: number[];
  /** The model-loaded log line: workers and threads the provider resolved. */
  loaded: Record<string, unknown> | null;
  exit(): string | null;
  stop(): Promise<void>;
}

/** `searchgate serve` with a temporary config: the gateway as deployed, in its own process. */
async function startGateway(arm: ArmSpec): Promise<Gateway> {
  const configDirectory = mkdtempSync(join(os.tmpdir(), 'searchgate-rerank-speed-'));
  const configPath = join(configDirectory, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 600_000 },
      // The production default: one access-log line per request is part of the price.
      logging: { level: 'info' },
      auth: { keys: [{ name: 'bench', key: BENCH_KEY }] },
      providers: { 'local-reranker': { type: 'local-reranker', model: arm.directory, ...arm.options } },
      search: { chain: [] },
      content: { chain: [] },
      cache: { enabled: false },
    }),
  );
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, [join(REPO_ROOT, 'dist/src/cli/main.js'), 'serve'], {
    cwd: REPO_ROOT,
    env: { ...process.env, SEARCHGATE_CONFIG: configPath, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The watchdog and errors end this process with process.exit; the server must not outlive it.
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const rerankDurationsMs: number[] = [];
  let loaded: Record<string, unknown> | null = null;
  let exit: string | null = null;
  child.once('exit', (code, signal) => (exit = `exited with ${signal ?? `code ${code}`}`));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${arm.label} gateway did not start within 120 s`)), 120_000);
    child.once('exit', (code) => reject(new Error(`the ${arm.label} gateway exited (code ${code}) before it listened`)));
    // Read every line, also after start: a full pipe would block the server's log writes.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: { msg?: string; address?: string; level?: string; path?: string; duration_ms?: number };
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (entry.level === 'error' || entry.level === 'warn') process.stderr.write(`${arm.label} gateway: ${line}\n`);
      if (entry.msg === 'reranker model loaded') loaded = entry as Record<string, unknown>;
      if (entry.msg === 'request' && entry.path === '/v1/rerank' && typeof entry.duration_ms === 'number') rerankDurationsMs.push(entry.duration_ms);
      if (entry.msg === 'listening' && entry.address) {
        clearTimeout(timer);
        resolveUrl(entry.address);
      }
    });
  });
  return {
    url,
    pid: child.pid!,
    startSeconds: (performance.now() - started) / 1000,
    rerankDurationsMs,
    get loaded() {
      return loaded;
    },
    exit: () => exit,
    stop: () =>
      new Promise<void>((resolveStop) => {
        const cleanUp = () => {
          process.off('exit', killOnExit);
          rmSync(configDirectory, { recursive: true, force: true });
          resolveStop();
        };
        if (child.exitCode !== null || child.signalCode !== null) return cleanUp();
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(kill);
          cleanUp();
        });
        child.kill('SIGTERM');
      }),
  };
}

async function rerank(gateway: Gateway, { query, documents }: ScoringJob): Promise<number[]> {
  const response = await fetch(`${gateway.url}/v1/rerank`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' },
    // Documents come back too, as LangSearch clients usually ask: the reply's size is part of the cost.
    body: JSON.stringify({ query, documents, top_n: documents.length, return_documents: true }),
  }).catch((error: Error) => {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    throw new Error(`POST ${gateway.url}/v1/rerank failed (${error.message}${cause}); the gateway process ${gateway.exit() ?? 'is running'}`);
  });
  const body = (await response.json()) as { results?: { index: number; relevance_score: number }[]; msg?: string };
  if (response.status !== 200 || !body.results) throw new Error(`POST /v1/rerank answered ${response.status}: ${body.msg ?? ''}`);
  const scores = new Array<number>(documents.length).fill(Number.NaN);
  for (const { index, relevance_score } of body.results) scores[index] = relevance_score;
  return scores;
}

/** The gateway's reranker counters from /metrics. */
async function rerankerCounters(gateway: Gateway): Promise<{ windows: number; cachedWindows: number; documents: number }> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name}\\{provider="local-reranker"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    windows: read('searchgate_local_reranker_windows_total'),
    cachedWindows: read('searchgate_local_reranker_cached_windows_total'),
    documents: read('searchgate_local_reranker_documents_total'),
  };
}

/** Resident memory of a process now and at its peak, in MiB; null without /proc. */
function memoryMiB(pid: number): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024;
    return { rss: Math.round(field('VmRSS')), peak: Math.round(field('VmHWM')) };
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------------------------------

/** Linux clock ticks (USER_HZ), as /proc reports CPU time. */
const TICK_MS = 10;

/** CPU time (user + system) of another process so far, in ms; 0 where /proc is unavailable. */
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** CPU time the whole machine has been busy so far (all CPUs), in ms; null where /proc is unavailable. */
function machineBusyMs(): number | null {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).map(Number);
    return (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) * TICK_MS;
  } catch {
    return null;
  }
}

type Phase = 'cold' | 'seen';

interface Block {
  arm: string;
  phase: Phase;
  /** Index into the measured requests. */
  request: number;
  latencyMs: number;
  /** CPU time of the arm's gateway during the block. */
  gatewayCpuMs: number;
  /** CPUs other processes (not this one, not the gateways) kept busy meanwhile; null without /proc. */
  otherCores: number | null;
}

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const mean = (values: readonly number[]) => (values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : Number.NaN);
const round1 = (value: number) => Math.round(value * 10) / 10;
const round3 = (value: number) => Math.round(value * 1000) / 1000;
const loadAverage = () => os.loadavg().map((load) => Math.round(load * 100) / 100);

/** Positions in `scores`' descending order (ties by index), as the gateway ranks. */
function rankingOf(scores: readonly number[]): number[] {
  return scores.map((score, index) => ({ score, index })).sort((a, b) => b.score - a.score || a.index - b.index).map(({ index }) => index);
}

async function main(): Promise<void> {
  const startedAt = new Date();
  startWatchdog(Number(flags['max-seconds']), 'rerank-speed');
  const machine = machineDescription();
  const arms = (flags.arm ?? DEFAULT_ARMS).map(parseArm);
  if (new Set(arms.map((arm) => arm.label)).size !== arms.length) throw new Error('--arm labels must differ');
  const specs = new Map(arms.map((arm) => [arm.label, readModelDirectory(arm.directory).spec]));
  const log = (line: string) => process.stderr.write(`${line}\n`);

  const random = seededRandom(SEED);
  const source = scifactSource(DATA_DIRECTORY, random) ?? generatedSource(random, (WARMUP + REQUESTS) * DOCUMENTS * 2, WARMUP + REQUESTS);
  const all = buildRequests(source, WARMUP + REQUESTS);
  const warmup = all.slice(0, WARMUP);
  const measured = all.slice(WARMUP);
  const tokens = tokenStatistics(arms[0]!.directory, specs.get(arms[0]!.label)!, measured);
  log(`${source.name}: ${REQUESTS} requests × ${DOCUMENTS} documents × ${WORDS} words, ${tokens.tokensPerDocument} tokens per document`);

  const gateways = new Map<string, Gateway>();
  for (const arm of arms) {
    log(`starting the ${arm.label} gateway (${relative(REPO_ROOT, arm.directory)})`);
    gateways.set(arm.label, await startGateway(arm));
  }
  const gatewayPids = [...gateways.values()].map((gateway) => gateway.pid);
  const ownCpuMs = () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  };

  // Warm-up: the first requests of a process pay for lazy initialisation (JIT, arenas).
  for (const request of warmup) {
    for (const arm of arms) {
      const gateway = gateways.get(arm.label)!;
      await rerank(gateway, request);
      await rerank(gateway, request);
    }
  }
  const countersBefore = new Map(await Promise.all(arms.map(async (arm) => [arm.label, await rerankerCounters(gateways.get(arm.label)!)] as const)));
  const loadAtMeasuredStart = loadAverage();

  const blocks: Block[] = [];
  const answers = new Map<string, number[]>();
  const seenMismatches: string[] = [];
  const measure = async (arm: ArmSpec, phase: Phase, index: number): Promise<void> => {
    const gateway = gateways.get(arm.label)!;
    const machineBefore = machineBusyMs();
    const ownBefore = ownCpuMs();
    const gatewaysBefore = gatewayPids.map(processCpuMs);
    const sent = performance.now();
    const scores = await rerank(gateway, measured[index]!);
    const latencyMs = performance.now() - sent;
    const gatewaysAfter = gatewayPids.map(processCpuMs);
    const ownAfter = ownCpuMs();
    const machineAfter = machineBusyMs();
    const gatewaysCpu = gatewaysAfter.reduce((sum, value, i) => sum + value - gatewaysBefore[i]!, 0);
    const otherCpuMs = machineAfter === null || machineBefore === null ? null : Math.max(0, machineAfter - machineBefore - (ownAfter - ownBefore) - gatewaysCpu);
    blocks.push({
      arm: arm.label,
      phase,
      request: index,
      latencyMs,
      gatewayCpuMs: gatewaysAfter[gatewayPids.indexOf(gateway.pid)]! - gatewaysBefore[gatewayPids.indexOf(gateway.pid)]!,
      otherCores: otherCpuMs === null ? null : round3(otherCpuMs / Math.max(1, latencyMs)),
    });
    const key = `${arm.label}/${index}`;
    if (phase === 'cold') {
      answers.set(key, scores);
    } else {
      const cold = answers.get(key)!;
      const worst = Math.max(...scores.map((score, i) => Math.abs(score - cold[i]!)));
      if (!(worst <= SCORE_TOLERANCE)) seenMismatches.push(`${key}: |Δscore| ${worst}`);
    }
  };

  const measuredStarted = performance.now();
  for (let index = 0; index < REQUESTS; index++) {
    const order = [...arms.slice(index % arms.length), ...arms.slice(0, index % arms.length)];
    for (const arm of order) await measure(arm, 'cold', index);
    for (const arm of order) await measure(arm, 'seen', index);
    const line = order
      .map((arm) => {
        const mine = blocks.filter((block) => block.arm === arm.label && block.request === index);
        return `${arm.label} ${mine.map((block) => `${block.phase} ${Math.round(block.latencyMs)} ms`).join(', ')}`;
      })
      .join('; ');
    log(`request ${index + 1}/${REQUESTS}: ${line}; load ${os.loadavg()[0]!.toFixed(2)}`);
  }
  const measuredSeconds = (performance.now() - measuredStarted) / 1000;
  const loadAtMeasuredEnd = loadAverage();

  const counters = new Map(await Promise.all(arms.map(async (arm) => [arm.label, await rerankerCounters(gateways.get(arm.label)!)] as const)));
  const memory = new Map(arms.map((arm) => [arm.label, memoryMiB(gateways.get(arm.label)!.pid)]));
  const serverDurations = new Map(arms.map((arm) => [arm.label, gateways.get(arm.label)!.rerankDurationsMs.slice(2 * WARMUP)]));
  const loaded = new Map(arms.map((arm) => [arm.label, gateways.get(arm.label)!.loaded]));
  await Promise.all([...gateways.values()].map((gateway) => gateway.stop()));

  // Summaries per arm and phase.
  const isQuiet = (block: Block) => block.otherCores !== null && block.otherCores <= QUIET_OTHER_CORES;
  const summarize = (label: string, phase: Phase) => {
    const mine = blocks.filter((block) => block.arm === label && block.phase === phase);
    const sorted = mine.map((block) => block.latencyMs).sort((a, b) => a - b);
    const quiet = mine.filter(isQuiet).map((block) => block.latencyMs);
    const durations = serverDurations.get(label)!.filter((_, i) => (i % 2 === 0) === (phase === 'cold'));
    return {
      requests: mine.length,
      p50Ms: round1(percentile(sorted, 0.5)),
      p95Ms: round1(percentile(sorted, 0.95)),
      meanMs: round1(mean(sorted)),
      documentsPerSecond: round1((mine.length * DOCUMENTS) / (sorted.reduce((sum, value) => sum + value, 0) / 1000)),
      serverMeanMs: round1(mean(durations)),
      gatewayCoresBusy: round3(mine.reduce((sum, block) => sum + block.gatewayCpuMs, 0) / sorted.reduce((sum, value) => sum + value, 0)),
      otherCoresMean: round3(mean(mine.map((block) => block.otherCores ?? Number.NaN))),
      quiet: { requests: quiet.length, p50Ms: quiet.length ? round1(median(quiet)) : null },
    };
  };
  const summary = Object.fromEntries(arms.map((arm) => [arm.label, { cold: summarize(arm.label, 'cold'), seen: summarize(arm.label, 'seen') }]));

  // Ratios: each arm against the first on the same request and phase, and seen against cold.
  const latencyOf = (label: string, phase: Phase, request: number) => blocks.find((block) => block.arm === label && block.phase === phase && block.request === request)!.latencyMs;
  const reference = arms[0]!.label;
  const requestIndices = Array.from({ length: REQUESTS }, (_, i) => i);
  const ratios = Object.fromEntries(
    arms.map((arm) => [
      arm.label,
      {
        [`coldVs_${reference}`]: round3(median(requestIndices.map((i) => latencyOf(arm.label, 'cold', i) / latencyOf(reference, 'cold', i)))),
        [`seenVs_${reference}`]: round3(median(requestIndices.map((i) => latencyOf(arm.label, 'seen', i) / latencyOf(reference, 'seen', i)))),
        seenVsCold: round3(median(requestIndices.map((i) => latencyOf(arm.label, 'seen', i) / latencyOf(arm.label, 'cold', i)))),
      },
    ]),
  );

  // Agreement of each arm's ranking with the reference's (cold answers; informational).
  const agreement = Object.fromEntries(
    arms.slice(1).map((arm) => {
      let sameTop = 0;
      let overlap = 0;
      for (const i of requestIndices) {
        const mine = rankingOf(answers.get(`${arm.label}/${i}`)!);
        const theirs = rankingOf(answers.get(`${reference}/${i}`)!);
        if (mine[0] === theirs[0]) sameTop++;
        const top = new Set(theirs.slice(0, 10));
        overlap += mine.slice(0, 10).filter((index) => top.has(index)).length / 10;
      }
      return [arm.label, { against: reference, sameTopDocument: `${sameTop}/${REQUESTS}`, meanTop10Overlap: round3(overlap / REQUESTS) }];
    }),
  );

  // The metrics must count the seen requests' windows as cached, and those only.
  const metricChecks = arms.map((arm) => {
    const before = countersBefore.get(arm.label)!;
    const after = counters.get(arm.label)!;
    const windows = after.windows - before.windows;
    const cachedWindows = after.cachedWindows - before.cachedWindows;
    return { arm: arm.label, windows, cachedWindows, cachedShare: round3(cachedWindows / windows), passed: windows > 0 && Math.abs(cachedWindows - windows / 2) < 1e-9 };
  });

  const targetArm = summary[flags['target-arm']!] ? flags['target-arm']! : arms[arms.length - 1]!.label;
  const target = {
    arm: targetArm,
    coldP50Ms: TARGETS.coldP50Ms,
    seenP50Ms: TARGETS.seenP50Ms,
    coldMet: summary[targetArm]!.cold.p50Ms <= TARGETS.coldP50Ms,
    seenMet: summary[targetArm]!.seen.p50Ms <= TARGETS.seenP50Ms,
  };
  const passed = seenMismatches.length === 0 && metricChecks.every((check) => check.passed);

  const result = {
    benchmark: 'bench/rerank-speed',
    startedAt: startedAt.toISOString(),
    durationSeconds: round1((Date.now() - startedAt.getTime()) / 1000),
    measuredSeconds: round1(measuredSeconds),
    command: `node dist/bench/rerank-speed.js ${process.argv.slice(2).join(' ')}`.trim(),
    machine: { ...machine, loadAverageAtMeasuredStart: loadAtMeasuredStart, loadAverageAtMeasuredEnd: loadAtMeasuredEnd, uptime: uptime() },
    setup: {
      source: source.name,
      requests: REQUESTS,
      warmupRequestsPerArm: WARMUP,
      documentsPerRequest: DOCUMENTS,
      wordsPerDocument: WORDS,
      ...tokens,
      gateway: 'searchgate serve, one process per arm; response cache off, logging info; POST /v1/rerank with top_n = all and return_documents: true',
      arms: arms.map((arm) => {
        const spec = specs.get(arm.label)!;
        return {
          label: arm.label,
          directory: relative(REPO_ROOT, arm.directory),
          model: { id: spec.id, file: spec.file, maxTokens: spec.maxTokens, windowOverlapTokens: spec.windowOverlapTokens },
          options: arm.options,
          loaded: loaded.get(arm.label),
          startSeconds: round1(gateways.get(arm.label)!.startSeconds),
          memoryMiB: memory.get(arm.label),
        };
      }),
      units: 'latency in ms per request, as the client sees it; gatewayCoresBusy: CPUs the gateway process kept busy during its requests',
    },
    arms: summary,
    ratios,
    agreement,
    target,
    checks: { seenAnswersEqualCold: seenMismatches, metrics: metricChecks, passed },
    quietOtherCores: QUIET_OTHER_CORES,
    blocks: blocks.map((block) => ({ ...block, latencyMs: round1(block.latencyMs) })),
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);

  const lines = [
    `### Reranker speed — ${result.startedAt}`,
    '',
    `Machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node}; load average at start ` +
      `${machine.loadAverageAtStart.join(' ')}, measured part from ${loadAtMeasuredStart.join(' ')} to ${loadAtMeasuredEnd.join(' ')}.`,
    `${REQUESTS} requests × ${DOCUMENTS} documents × ${WORDS} words (${source.name}): ${tokens.tokensPerDocument} tokens and ` +
      `${tokens.windowsPerDocument} windows per document, ${tokens.modelTokensPerRequest} tokens through the model per cold request.`,
    '',
    `| arm | model | phase | p50 (ms) | p95 (ms) | mean (ms) | documents/s | p50 vs ${reference} (median pair) | seen ÷ cold (median pair) | quiet requests: p50 | gateway cores | other processes (cores) |`,
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...arms.flatMap((arm) =>
      (['cold', 'seen'] as const).map((phase) => {
        const row = summary[arm.label]![phase];
        const spec = specs.get(arm.label)!;
        return (
          `| ${arm.label} | ${spec.file} | ${phase} | ${row.p50Ms} | ${row.p95Ms} | ${row.meanMs} | ${row.documentsPerSecond} | ` +
          `${ratios[arm.label]![`${phase}Vs_${reference}`]!.toFixed(3)} | ${phase === 'seen' ? ratios[arm.label]!.seenVsCold.toFixed(3) : '—'} | ` +
          `${row.quiet.p50Ms ?? 'n/a'} (${row.quiet.requests}) | ${row.gatewayCoresBusy.toFixed(2)} | ${row.otherCoresMean.toFixed(2)} |`
        );
      }),
    ),
    '',
    `Gateways: ${arms
      .map((arm) => {
        const info = loaded.get(arm.label) as { workers?: number; threadsPerWorker?: number } | null;
        const mem = memory.get(arm.label);
        return `${arm.label} ${info?.workers ?? '?'} workers × ${info?.threadsPerWorker ?? '?'} threads, RSS ${mem?.rss ?? '?'} MiB (peak ${mem?.peak ?? '?'})`;
      })
      .join('; ')}.`,
    `Agreement with ${reference} (cold): ${Object.entries(agreement)
      .map(([label, value]) => `${label} same top document ${value.sameTopDocument}, top-10 overlap ${value.meanTop10Overlap}`)
      .join('; ') || 'n/a'}.`,
    `Targets (${targetArm}): cold p50 ≤ ${TARGETS.coldP50Ms} ms ${target.coldMet ? 'met' : 'MISSED'} (${summary[targetArm]!.cold.p50Ms}); ` +
      `seen p50 ≤ ${TARGETS.seenP50Ms} ms ${target.seenMet ? 'met' : 'MISSED'} (${summary[targetArm]!.seen.p50Ms}).`,
    `Checks: seen answers equal cold ones ${seenMismatches.length === 0 ? 'passed' : `FAILED (${seenMismatches.slice(0, 3).join('; ')})`}; ` +
      `metrics count seen windows as cached ${metricChecks.map((check) => `${check.arm} ${check.cachedWindows}/${check.windows}`).join(', ')} — ` +
      `${metricChecks.every((check) => check.passed) ? 'passed' : 'FAILED'}.`,
    `Measured part ${result.measuredSeconds} s, whole run ${result.durationSeconds} s. JSON: ${relative(process.cwd(), OUT)}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (!passed) process.exitCode = 1;
}

function uptime(): string {
  const seconds = os.uptime();
  return `up ${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min, load average ${os.loadavg().map((load) => load.toFixed(2)).join(', ')}`;
}

try {
  await main();
} catch (error) {
  process.stderr.write(`rerank-speed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
}
