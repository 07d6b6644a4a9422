/**
 * Speed of the embedded reranker through the HTTP API, against the raw ONNX Runtime session on the
 * same inputs in the same run (the model's own limit on this CPU). Target: ≥ 90% of raw documents/s.
 *
 * Inputs: one request = one query and --documents documents of --words words. Documents are real
 * scientific abstracts from ../shared/data/scifact/corpus.jsonl (title + text, continued into the
 * next unused abstract when short, cut at --words words) and queries are SciFact claims. No query
 * and no document occurs twice in a run: the gateway's response cache is off, and its cache of
 * document-window embeddings must never have seen a document, or it would skip work the raw session
 * does. Without the SciFact folder, seeded text from a fixed English vocabulary. Every arm scores
 * exactly the same requests.
 *
 * Arms:
 *   raw             InferenceSession in this process's main thread: tokenize, window, ONNX batches;
 *                   the same threads (every core) and maxBatchTokens as the gateway's defaults.
 *   engine          NeuralReranker in this process, default options: the same session behind the
 *                   worker thread and queue the gateway uses, without HTTP. It splits a gap into
 *                   worker hand-off and the rest.
 *   http            `searchgate serve` as a separate process (its own event loop, as deployed),
 *                   POST /v1/rerank with fetch, one request at a time.
 *   httpConcurrent  another such process with C requests in flight: queueing must not lose throughput.
 * The sequential arms take turns request by request, the first of each turn rotating; the concurrent
 * arm scores each round of C requests at once, before or after the others' turns on them. Drift and
 * neighbours' load thus fall on all arms alike. Every block is paired with the raw session's blocks
 * on the same requests; the median pair ratio and the totals over pairs no other process disturbed
 * are reported next to the plain totals, because on 2 CPUs any neighbour slows the arm it meets.
 *
 * Checks (the run fails, exit 1, when one does not hold): every arm's scores are the raw session's
 * scores calibrated, in the same order; no window of the engine arm came from the embedding cache.
 *
 *   npm run bench:rerank-speed                       # 20 requests × 50 documents × 250 words (~8 min)
 *   node dist/bench/rerank-speed.js --requests 4     # smoke run (JSON under bench/results/quick.tmp/)
 *
 * Flags: --requests N (20; rounded up to whole rounds) --documents D (50) --words W (250)
 *        --concurrency C (4) --warmup K (2 requests per arm) --model DIR (models/all-minilm-l6-v2)
 *        --data DIR (../shared/data/scifact) --seed S (1) --out FILE (bench/results/rerank-speed.json)
 *        --max-seconds S (900)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Tokenizer } from '@huggingface/tokenizers';
import { calibrate } from '../src/local/rerank/calibration.js';
import { NeuralReranker } from '../src/local/rerank/engine.js';
import { InferenceSession, type JobScores, type ScoringJob } from '../src/local/rerank/inference.js';
import { readModelDirectory, type RerankModelSpec } from '../src/local/rerank/model.js';
import { localRerankerOptionsSchema } from '../src/providers/local/rerank.js';
import { machineDescription, startWatchdog } from './index-bench-common.js';
import { seededRandom } from '../src/util/random.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '20' },
    documents: { type: 'string', default: '50' },
    words: { type: 'string', default: '250' },
    concurrency: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '2' },
    model: { type: 'string', default: 'models/all-minilm-l6-v2' },
    data: { type: 'string', default: '../shared/data/scifact' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string' },
    'max-seconds': { type: 'string', default: '900' },
  },
});
const positiveInteger = (name: keyof typeof flags): number => {
  const value = Number(flags[name]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
};
const CONCURRENCY = positiveInteger('concurrency');
const ROUNDS = Math.ceil(positiveInteger('requests') / CONCURRENCY);
const REQUESTS = ROUNDS * CONCURRENCY;
const DOCUMENTS = positiveInteger('documents');
const WORDS = positiveInteger('words');
const WARMUP = positiveInteger('warmup');
const SEED = positiveInteger('seed');
const MODEL_DIRECTORY = resolve(REPO_ROOT, flags.model!);
const DATA_DIRECTORY = resolve(REPO_ROOT, flags.data!);
/** Fewer than the default requests is a smoke run: its figures must not overwrite the published ones. */
const OUT = resolve(
  REPO_ROOT,
  flags.out ?? (REQUESTS < 20 ? 'bench/results/quick.tmp/rerank-speed.json' : 'bench/results/rerank-speed.json'),
);
const TARGET_RATIO = 0.9;
const BENCH_KEY = 'sk-bench-rerank-0123456789';
/** What the gateway runs with when the config says nothing: the raw arm must match it. */
const MAX_BATCH_TOKENS = localRerankerOptionsSchema.properties.maxBatchTokens.default;
const THREADS = os.availableParallelism();
/** Calibrated scores are compared as numbers; below this two scores count as a tie for the order check. */
const SCORE_TOLERANCE = 1e-6;
/**
 * A pair of blocks counts as quiet when neither shared the machine with more than this many busy
 * CPUs of other processes. ONNX Runtime uses every core, so any neighbour slows the arm it meets,
 * and totals over disturbed blocks compare luck rather than code.
 */
const QUIET_OTHER_CORES = 0.15;

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

/**
 * Requests whose documents are all different texts with no passage in common: the gateway keeps
 * bi-encoder window embeddings for reuse, and a document it had seen before would be scored from
 * that cache while the raw session computes it, so repeats would flatter the gateway. Each document
 * is one passage, continued into the next unused one when short, and cut at WORDS words.
 */
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

// ---------------------------------------------------------------------------------------------------
// Arms
// ---------------------------------------------------------------------------------------------------

/** Per document, what the gateway would answer: the raw score calibrated, as the engine does it. */
function expectedScores(spec: RerankModelSpec, scores: JobScores): number[] {
  return scores.semantic.map((value, i) => calibrate(spec.calibration, value + spec.lexicalWeight * scores.lexical[i]!, spec.family));
}

/** Answers of one arm for one request: calibrated scores in document order. */
type Scorer = (request: ScoringJob) => Promise<number[]>;

interface Gateway {
  url: string;
  pid: number;
  startSeconds: number;
  /** duration_ms of each POST /v1/rerank from the access log, in the order answered. */
  rerankDurationsMs: number[];
  /** How the process ended, or null while it runs. */
  exit(): string | null;
  stop(): Promise<void>;
}

/** `searchgate serve` with a temporary config: the gateway as deployed, in its own process. */
async function startGateway(): Promise<Gateway> {
  const configDirectory = mkdtempSync(join(os.tmpdir(), 'searchgate-rerank-speed-'));
  const configPath = join(configDirectory, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      // The concurrent arm queues up to C requests of several seconds each behind one another.
      server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 600_000 },
      // The production default: one access-log line per request is part of the price.
      logging: { level: 'info' },
      auth: { keys: [{ name: 'bench', key: BENCH_KEY }] },
      providers: { 'local-reranker': { type: 'local-reranker', model: MODEL_DIRECTORY } },
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
  let exit: string | null = null;
  child.once('exit', (code, signal) => (exit = `exited with ${signal ?? `code ${code}`}`));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error('the gateway did not start within 120 s')), 120_000);
    child.once('exit', (code) => reject(new Error(`the gateway exited (code ${code}) before it listened`)));
    // Read every line, also after start: a full pipe would block the server's log writes.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: { msg?: string; address?: string; level?: string; path?: string; duration_ms?: number };
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (entry.level === 'error') process.stderr.write(`gateway: ${line}\n`);
      if (entry.msg === 'request' && entry.path === '/v1/rerank' && typeof entry.duration_ms === 'number') {
        rerankDurationsMs.push(entry.duration_ms);
      }
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

function httpScorer(gateway: Gateway): Scorer {
  return async ({ query, documents }) => {
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
  };
}

// ---------------------------------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------------------------------

/** Linux clock ticks (USER_HZ), as /proc reports CPU time. */
const TICK_MS = 10;

/** CPU time (user + system) of another process so far, in ms; 0 where /proc is unavailable. */
function childCpuMs(pid: number): number {
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

interface CpuReading {
  bench: number;
  gateway: number;
  machine: number | null;
}

function readCpu(gatewayPids: readonly number[]): CpuReading {
  const own = process.cpuUsage();
  return {
    bench: (own.user + own.system) / 1000,
    gateway: gatewayPids.reduce((sum, pid) => sum + childCpuMs(pid), 0),
    machine: machineBusyMs(),
  };
}

type ArmName = 'raw' | 'engine' | 'http' | 'httpConcurrent';

interface ArmTotals {
  latenciesMs: number[];
  wallMs: number;
  benchCpuMs: number;
  gatewayCpuMs: number;
  /** Busy CPU time of processes other than this one and the gateways; null without /proc. */
  otherCpuMs: number | null;
}

/** One arm scoring some of the measured requests: one request, or a round's C at once. */
interface BlockRecord {
  arm: ArmName;
  /** Indices into the measured requests. */
  requests: number[];
  wallMs: number;
  /** CPUs other processes kept busy meanwhile; null without /proc. */
  otherCores: number | null;
}

/** Runs `requests` through one arm, `inFlight` at a time, in order; latencies in request order. */
async function runBlock(
  scorer: Scorer,
  requests: readonly ScoringJob[],
  inFlight: number,
): Promise<{ latenciesMs: number[]; scores: number[][]; wallMs: number }> {
  const latenciesMs = new Array<number>(requests.length);
  const scores = new Array<number[]>(requests.length);
  let next = 0;
  const started = performance.now();
  const client = async () => {
    while (next < requests.length) {
      const i = next++;
      const sent = performance.now();
      scores[i] = await scorer(requests[i]!);
      latenciesMs[i] = performance.now() - sent;
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, requests.length) }, client));
  return { latenciesMs, scores, wallMs: performance.now() - started };
}

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const round3 = (value: number) => Math.round(value * 1000) / 1000;

/** Positions in `scores`' descending order (ties by index), as the gateway ranks. */
function rankingOf(scores: readonly number[]): number[] {
  return scores.map((score, index) => ({ score, index })).sort((a, b) => b.score - a.score || a.index - b.index).map(({ index }) => index);
}

interface RankingCheck {
  requests: number;
  sameOrder: number;
  /** Differing orders where the swapped documents' expected scores differ by more than the tolerance. */
  realMismatches: number;
  maxScoreDifference: number;
}

function compareRanking(check: RankingCheck, expected: readonly number[], answered: readonly number[]): void {
  check.requests++;
  for (let i = 0; i < expected.length; i++) {
    check.maxScoreDifference = Math.max(check.maxScoreDifference, Math.abs(expected[i]! - answered[i]!) || 0);
    if (Number.isNaN(answered[i]!)) check.maxScoreDifference = Number.POSITIVE_INFINITY;
  }
  const want = rankingOf(expected);
  const got = rankingOf(answered);
  if (want.every((index, position) => index === got[position])) {
    check.sameOrder++;
    return;
  }
  const nearTie = want.every((index, position) => index === got[position] || Math.abs(expected[index]! - expected[got[position]!]!) <= SCORE_TOLERANCE);
  if (!nearTie) check.realMismatches++;
}

/** Median wall time of `work` over a few runs, in ms: for costs too small to see in a request's latency. */
function medianMs(work: () => unknown, runs = 21): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    work();
    times.push(performance.now() - started);
  }
  return median(times);
}

/**
 * What the API path does per request besides scoring, each timed alone on one real request: the
 * JSON both ways (client and gateway), the copy of the job to the worker thread and of the scores
 * back, and calibrating and ranking. Their sum bounds what the path can lose to the raw session.
 */
function perRequestCosts(spec: RerankModelSpec, request: ScoringJob, scores: JobScores) {
  const requestBody = JSON.stringify({ query: request.query, documents: request.documents, top_n: request.documents.length, return_documents: true });
  const calibrated = expectedScores(spec, scores);
  // The shape src/api/envelopes.ts answers with.
  const reply = {
    code: 200,
    log_id: 'bench-log-id-0000000000',
    msg: null,
    model: 'service-reranker-v1',
    results: rankingOf(calibrated).map((index) => ({
      index,
      relevance_score: calibrated[index]!,
      rerankScore: calibrated[index]!,
      document: { text: request.documents[index]! },
    })),
  };
  const replyBody = JSON.stringify(reply);
  const costs = {
    requestJsonMs: medianMs(() => JSON.parse(JSON.stringify(JSON.parse(requestBody)))),
    replyJsonMs: medianMs(() => JSON.parse(JSON.stringify(reply))),
    workerHandOffMs: medianMs(() => [structuredClone({ id: 1, jobs: [request] }), structuredClone({ id: 1, scores: [scores], cacheHits: 0 })]),
    calibrateAndRankMs: medianMs(() => rankingOf(expectedScores(spec, scores))),
  };
  const rounded = Object.fromEntries(Object.entries(costs).map(([key, value]) => [key, round3(value)])) as typeof costs;
  return {
    requestBodyKiB: round1(Buffer.byteLength(requestBody) / 1024),
    replyBodyKiB: round1(Buffer.byteLength(replyBody) / 1024),
    ...rounded,
    totalMs: round3(Object.values(costs).reduce((a, b) => a + b, 0)),
  };
}

/** The gateways log a request's line as they answer it; the last line may trail the reply a little. */
async function allLogged(gateway: Gateway, count: number): Promise<number[]> {
  for (let waited = 0; gateway.rerankDurationsMs.length < count && waited < 3000; waited += 50) {
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
  return gateway.rerankDurationsMs;
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  startWatchdog(Number(flags['max-seconds']), 'rerank-speed');
  const startedAt = new Date();
  const machine = machineDescription();
  if (!existsSync(join(REPO_ROOT, 'dist/src/cli/main.js'))) throw new Error('dist/ is missing: run npm run build first');
  let model;
  try {
    model = readModelDirectory(MODEL_DIRECTORY);
  } catch (error) {
    console.error(`rerank-speed: ${(error as Error).message}`);
    process.exit(2);
  }
  const { directory, spec } = model;

  const random = seededRandom(SEED);
  const source = scifactSource(DATA_DIRECTORY, random) ?? generatedSource(random, (WARMUP + REQUESTS) * DOCUMENTS, WARMUP + REQUESTS);
  const all = buildRequests(source, WARMUP + REQUESTS);
  const warmup = all.slice(0, WARMUP);
  const measured = all.slice(WARMUP);
  const log = (line: string) => process.stderr.write(`rerank-speed: ${line}\n`);
  log(`${REQUESTS} requests × ${DOCUMENTS} documents × ${WORDS} words from ${source.name}; ${THREADS} threads, maxBatchTokens ${MAX_BATCH_TOKENS}`);

  // Token counts on their own, so that tokenizing's share of a request is known.
  const tokenizer = new Tokenizer(
    JSON.parse(readFileSync(join(directory, 'tokenizer.json'), 'utf8')),
    JSON.parse(readFileSync(join(directory, 'tokenizer_config.json'), 'utf8')),
  );
  let tokens = 0;
  const tokenizeStarted = performance.now();
  for (const request of measured) for (const document of request.documents) tokens += tokenizer.tokenize(spec.documentPrefix + document).length;
  const tokenizeMsPerRequest = (performance.now() - tokenizeStarted) / REQUESTS;

  let opened = performance.now();
  const session = await InferenceSession.open(directory, spec, { threads: THREADS, maxBatchTokens: MAX_BATCH_TOKENS });
  const rawOpenSeconds = (performance.now() - opened) / 1000;
  opened = performance.now();
  const engine = await NeuralReranker.open(directory, { maxBatchTokens: MAX_BATCH_TOKENS });
  const engineOpenSeconds = (performance.now() - opened) / 1000;
  // One gateway per HTTP arm, so that each sees every document once, as the engine arm does: a
  // shared one would answer the second arm's windows from its embedding cache.
  const sequentialGateway = await startGateway();
  const concurrentGateway = await startGateway();
  const gatewayPids = [sequentialGateway.pid, concurrentGateway.pid];
  log(
    `loaded: raw session ${rawOpenSeconds.toFixed(1)} s, engine ${engineOpenSeconds.toFixed(1)} s, ` +
      `gateway processes ${sequentialGateway.startSeconds.toFixed(1)} s and ${concurrentGateway.startSeconds.toFixed(1)} s`,
  );

  // The raw arm keeps its JobScores: they are the reference for every other arm's answers.
  const rawScores = new Map<ScoringJob, JobScores>();
  const raw: Scorer = async (request) => {
    const [scores] = await session.score([request]);
    rawScores.set(request, scores!);
    return expectedScores(spec, scores!);
  };
  const viaEngine: Scorer = (request) => engine.score(request.query, request.documents);
  const arms: Record<ArmName, { scorer: Scorer; inFlight: number }> = {
    raw: { scorer: raw, inFlight: 1 },
    engine: { scorer: viaEngine, inFlight: 1 },
    http: { scorer: httpScorer(sequentialGateway), inFlight: 1 },
    httpConcurrent: { scorer: httpScorer(concurrentGateway), inFlight: CONCURRENCY },
  };
  const armNames = Object.keys(arms) as ArmName[];

  log(`warm-up: ${WARMUP} requests per arm`);
  for (const name of armNames) await runBlock(arms[name].scorer, warmup, arms[name].inFlight);

  const totals = Object.fromEntries(
    armNames.map((name) => [name, { latenciesMs: [], wallMs: 0, benchCpuMs: 0, gatewayCpuMs: 0, otherCpuMs: 0 } as ArmTotals]),
  ) as Record<ArmName, ArmTotals>;
  const checkedArms = armNames.filter((name): name is Exclude<ArmName, 'raw'> => name !== 'raw');
  const checks = Object.fromEntries(
    checkedArms.map((name) => [name, { requests: 0, sameOrder: 0, realMismatches: 0, maxScoreDifference: 0 } as RankingCheck]),
  ) as Record<Exclude<ArmName, 'raw'>, RankingCheck>;
  const blocks: BlockRecord[] = [];
  // Checked once the round is over: the raw session may score a request after another arm did.
  let answers: { name: ArmName; requests: ScoringJob[]; scores: number[][] }[] = [];
  const checkAnswers = () => {
    for (const { name, requests, scores } of answers) {
      if (name === 'raw') continue;
      requests.forEach((request, i) => compareRanking(checks[name], expectedScores(spec, rawScores.get(request)!), scores[i]!));
    }
    answers = [];
  };
  const measureBlock = async (name: ArmName, indices: number[]): Promise<BlockRecord> => {
    const requests = indices.map((i) => measured[i]!);
    const before = readCpu(gatewayPids);
    const block = await runBlock(arms[name].scorer, requests, arms[name].inFlight);
    const after = readCpu(gatewayPids);
    const total = totals[name];
    total.latenciesMs.push(...block.latenciesMs);
    total.wallMs += block.wallMs;
    total.benchCpuMs += after.bench - before.bench;
    total.gatewayCpuMs += after.gateway - before.gateway;
    const otherCpuMs =
      after.machine === null || before.machine === null
        ? null
        : Math.max(0, after.machine - before.machine - (after.bench - before.bench) - (after.gateway - before.gateway));
    total.otherCpuMs = otherCpuMs === null || total.otherCpuMs === null ? null : total.otherCpuMs + otherCpuMs;
    const record: BlockRecord = {
      arm: name,
      requests: indices,
      wallMs: block.wallMs,
      otherCores: otherCpuMs === null ? null : round3(otherCpuMs / block.wallMs),
    };
    blocks.push(record);
    answers.push({ name, requests, scores: block.scores });
    return record;
  };
  const measuredStarted = performance.now();
  // Arms take turns request by request (a neighbour's burst of a few seconds then falls on all of
  // them), the first of each turn rotating so that no arm always follows the same one. The
  // concurrent arm needs C requests at once: it scores each round's, before or after the others.
  const sequentialArms = armNames.filter((name) => arms[name].inFlight === 1);
  for (let round = 0; round < ROUNDS; round++) {
    const indices = Array.from({ length: CONCURRENCY }, (_, k) => round * CONCURRENCY + k);
    const roundBlocks: BlockRecord[] = [];
    if (round % 2 === 1) roundBlocks.push(await measureBlock('httpConcurrent', indices));
    for (const index of indices) {
      const shift = index % sequentialArms.length;
      for (const name of [...sequentialArms.slice(shift), ...sequentialArms.slice(0, shift)]) {
        roundBlocks.push(await measureBlock(name, [index]));
      }
    }
    if (round % 2 === 0) roundBlocks.push(await measureBlock('httpConcurrent', indices));
    checkAnswers();
    const rate = (name: ArmName) => {
      const mine = roundBlocks.filter((block) => block.arm === name);
      return ((CONCURRENCY * DOCUMENTS) / (mine.reduce((sum, block) => sum + block.wallMs, 0) / 1000)).toFixed(1);
    };
    log(
      `round ${round + 1}/${ROUNDS}: documents/s raw ${rate('raw')}, engine ${rate('engine')}, http ${rate('http')}, ` +
        `http ×${CONCURRENCY} ${rate('httpConcurrent')}; other processes up to ` +
        `${Math.max(...roundBlocks.map((block) => block.otherCores ?? 0)).toFixed(2)} cores`,
    );
  }
  const measuredSeconds = (performance.now() - measuredStarted) / 1000;
  const windows = measured.reduce((sum, request) => sum + rawScores.get(request)!.windows, 0);

  // The engine saw the same documents in the same order as each gateway; none repeated, so no window
  // may have come from its cache, and then none did in the gateways either.
  const engineCacheHits = engine.stats.cachedWindows;
  const serverDurationsMs: Record<'http' | 'httpConcurrent', number[]> = {
    http: (await allLogged(sequentialGateway, WARMUP + REQUESTS)).slice(WARMUP),
    httpConcurrent: (await allLogged(concurrentGateway, WARMUP + REQUESTS)).slice(WARMUP),
  };
  await Promise.all([sequentialGateway.stop(), concurrentGateway.stop()]);
  const costs = perRequestCosts(spec, measured[0]!, rawScores.get(measured[0]!)!);
  await engine.close();
  await session.close();

  const documentsPerSecond = (name: ArmName) => (REQUESTS * DOCUMENTS) / (totals[name].wallMs / 1000);
  // Each block of an arm against the raw session's blocks on the same requests: the same work, so
  // the ratio of their times is the ratio of their documents/s. Quiet pairs: no neighbour in either.
  const rawBlockOf = new Map(blocks.filter((block) => block.arm === 'raw').map((block) => [block.requests[0]!, block]));
  const isQuiet = (block: BlockRecord) => block.otherCores !== null && block.otherCores <= QUIET_OTHER_CORES;
  const pairsOf = (name: ArmName) =>
    blocks
      .filter((block) => block.arm === name)
      .map((block) => {
        const rawBlocks = block.requests.map((index) => rawBlockOf.get(index)!);
        return {
          rawMs: rawBlocks.reduce((sum, rawBlock) => sum + rawBlock.wallMs, 0),
          armMs: block.wallMs,
          documents: block.requests.length * DOCUMENTS,
          quiet: isQuiet(block) && rawBlocks.every(isQuiet),
        };
      });
  const quietPairsOf = (name: ArmName) => {
    const quiet = pairsOf(name).filter((pair) => pair.quiet);
    const armMs = quiet.reduce((sum, pair) => sum + pair.armMs, 0);
    return {
      count: quiet.length,
      of: pairsOf(name).length,
      documentsPerSecond: quiet.length ? round1(quiet.reduce((sum, pair) => sum + pair.documents, 0) / (armMs / 1000)) : null,
      ratioToRaw: quiet.length ? round3(quiet.reduce((sum, pair) => sum + pair.rawMs, 0) / armMs) : null,
    };
  };
  const summarize = (name: ArmName) => {
    const total = totals[name];
    const sorted = [...total.latenciesMs].sort((a, b) => a - b);
    // The process that did the scoring: this one for raw and engine, the gateway for the HTTP arms.
    const overHttp = name === 'http' || name === 'httpConcurrent';
    return {
      requests: total.latenciesMs.length,
      inFlight: arms[name].inFlight,
      documentsPerSecond: round1(documentsPerSecond(name)),
      p50Ms: Math.round(percentile(sorted, 0.5)),
      p95Ms: Math.round(percentile(sorted, 0.95)),
      meanMs: Math.round(mean(total.latenciesMs)),
      // The gateway's own duration_ms (body parsing to handler end); the rest of a request's latency
      // is outside its handler: HTTP transport, serializing the reply, the client's JSON.
      serverMeanMs: overHttp ? round1(mean(serverDurationsMs[name])) : null,
      outsideServerMeanMs: overHttp ? round1(mean(total.latenciesMs) - mean(serverDurationsMs[name])) : null,
      wallSeconds: round1(total.wallMs / 1000),
      ratioToRaw: round3(documentsPerSecond(name) / documentsPerSecond('raw')),
      medianPairRatioToRaw: round3(median(pairsOf(name).map((pair) => pair.rawMs / pair.armMs))),
      quietPairs: quietPairsOf(name),
      serverCores: round3((overHttp ? total.gatewayCpuMs : total.benchCpuMs) / total.wallMs),
      clientCores: overHttp ? round3(total.benchCpuMs / total.wallMs) : null,
      otherCores: total.otherCpuMs === null ? null : round3(total.otherCpuMs / total.wallMs),
    };
  };
  const summary = Object.fromEntries(armNames.map((name) => [name, summarize(name)])) as Record<ArmName, ReturnType<typeof summarize>>;
  const failedChecks = checkedArms.filter((name) => checks[name].realMismatches > 0 || checks[name].maxScoreDifference > SCORE_TOLERANCE);

  const result = {
    benchmark: 'bench/rerank-speed',
    startedAt: startedAt.toISOString(),
    durationSeconds: round1((Date.now() - startedAt.getTime()) / 1000),
    measuredSeconds: round1(measuredSeconds),
    command: `node dist/bench/rerank-speed.js ${process.argv.slice(2).join(' ')}`.trim(),
    machine: { ...machine, loadAverageAfter: os.loadavg().map((load) => Math.round(load * 100) / 100) },
    setup: {
      model: { directory: relative(REPO_ROOT, directory), id: spec.id, family: spec.family, maxTokens: spec.maxTokens, windowOverlapTokens: spec.windowOverlapTokens },
      threads: THREADS,
      maxBatchTokens: MAX_BATCH_TOKENS,
      source: source.name,
      requests: REQUESTS,
      warmupRequestsPerArm: WARMUP,
      documentsPerRequest: DOCUMENTS,
      wordsPerDocument: WORDS,
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      tokensPerDocument: round1(tokens / (REQUESTS * DOCUMENTS)),
      windowsPerDocument: round3(windows / (REQUESTS * DOCUMENTS)),
      tokenizeMsPerRequest: round1(tokenizeMsPerRequest),
      perRequestCostsBesidesScoring: costs,
      loadSeconds: {
        raw: round1(rawOpenSeconds),
        engine: round1(engineOpenSeconds),
        gatewayProcesses: [round1(sequentialGateway.startSeconds), round1(concurrentGateway.startSeconds)],
      },
      gateway:
        'searchgate serve, one process per HTTP arm; response cache off, everything else default (embedding cache on, ' +
        'logging info); POST /v1/rerank with top_n = all and return_documents: true; every document unseen',
      embeddingCacheHitsInEngineArm: engineCacheHits,
      units: 'latency in ms per request; *Cores: average CPUs busy during the arm (server = the process that scored)',
    },
    target: {
      ratio: TARGET_RATIO,
      all: { http: summary.http.ratioToRaw >= TARGET_RATIO, httpConcurrent: summary.httpConcurrent.ratioToRaw >= TARGET_RATIO },
      quietPairs: {
        http: summary.http.quietPairs.ratioToRaw === null ? null : summary.http.quietPairs.ratioToRaw >= TARGET_RATIO,
        httpConcurrent: summary.httpConcurrent.quietPairs.ratioToRaw === null ? null : summary.httpConcurrent.quietPairs.ratioToRaw >= TARGET_RATIO,
      },
    },
    arms: summary,
    quietPairsMaxOtherCores: QUIET_OTHER_CORES,
    rankingCheck: { tolerance: SCORE_TOLERANCE, engine: checks.engine, http: checks.http, httpConcurrent: checks.httpConcurrent, passed: failedChecks.length === 0 },
    passed: failedChecks.length === 0 && engineCacheHits === 0,
    blocks: blocks.map((block) => ({ ...block, wallMs: Math.round(block.wallMs) })),
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);

  const labels: Record<ArmName, string> = {
    raw: 'raw ONNX session (main thread)',
    engine: 'engine: worker thread + queue, no HTTP',
    http: 'HTTP API, 1 client',
    httpConcurrent: `HTTP API, ${CONCURRENCY} clients`,
  };
  const cores = (value: number | null) => (value === null ? 'n/a' : value.toFixed(2));
  const verdict = (met: boolean | null) => (met === null ? 'n/a (no quiet pair)' : met ? 'met' : 'MISSED');
  const lines = [
    `### Reranker speed — ${result.startedAt}`,
    '',
    `Machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node}; load average at start ` +
      `${machine.loadAverageAtStart.join(' ')}, at end ${result.machine.loadAverageAfter.join(' ')}.`,
    `Model ${spec.id} (${spec.family}, ${spec.maxTokens}-token windows), ${THREADS} threads, maxBatchTokens ${MAX_BATCH_TOKENS}. ` +
      `${REQUESTS} requests × ${DOCUMENTS} documents × ${WORDS} words (${source.name}): ` +
      `${result.setup.tokensPerDocument} tokens and ${result.setup.windowsPerDocument} windows per document; tokenizing takes ` +
      `${result.setup.tokenizeMsPerRequest} ms of a request.`,
    '',
    '| arm | documents/s | p50 (ms) | p95 (ms) | vs raw: all | vs raw: median pair | quiet pairs: documents/s | quiet pairs: vs raw | server cores | other processes (cores) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...armNames.map((name) => {
      const arm = summary[name];
      const quiet = arm.quietPairs;
      return (
        `| ${labels[name]} | ${arm.documentsPerSecond} | ${arm.p50Ms} | ${arm.p95Ms} | ${arm.ratioToRaw.toFixed(3)} | ` +
        `${arm.medianPairRatioToRaw.toFixed(3)} | ${quiet.documentsPerSecond ?? 'n/a'} (${quiet.count} of ${quiet.of}) | ` +
        `${quiet.ratioToRaw?.toFixed(3) ?? 'n/a'} | ${cores(arm.serverCores)} | ${cores(arm.otherCores)} |`
      );
    }),
    '',
    `A pair is one block of an arm (one request; C requests for the concurrent arm) and the raw session's blocks on the same ` +
      `requests; quiet when other processes kept ≤ ${QUIET_OTHER_CORES} cores busy during both.`,
    `Per request besides scoring, each timed alone: request JSON ${costs.requestJsonMs} ms (${costs.requestBodyKiB} KiB), ` +
      `reply JSON ${costs.replyJsonMs} ms (${costs.replyBodyKiB} KiB), worker hand-off ${costs.workerHandOffMs} ms, ` +
      `calibrate and rank ${costs.calibrateAndRankMs} ms: ${costs.totalMs} ms in all, ` +
      `${((100 * costs.totalMs) / summary.raw.meanMs).toFixed(2)}% of a raw request's ${summary.raw.meanMs} ms. ` +
      `HTTP, 1 client: the gateway's handler took ${summary.http.serverMeanMs} ms per request on average, ` +
      `${summary.http.outsideServerMeanMs} ms more passed outside it (transport, reply, client).`,
    `Target ≥ ${TARGET_RATIO} of raw documents/s — all requests: HTTP 1 client ${verdict(result.target.all.http)}, ` +
      `${CONCURRENCY} clients ${verdict(result.target.all.httpConcurrent)}; quiet pairs: HTTP 1 client ` +
      `${verdict(result.target.quietPairs.http)}, ${CONCURRENCY} clients ${verdict(result.target.quietPairs.httpConcurrent)}.`,
    `Ranking check (answers vs the raw session's scores, calibrated): ` +
      checkedArms.map((name) => `${name} ${checks[name].sameOrder}/${checks[name].requests} same order, max |Δscore| ${checks[name].maxScoreDifference.toExponential(1)}`)
        .join('; ') +
      (failedChecks.length ? ` — FAILED: ${failedChecks.join(', ')}` : ' — passed.'),
    engineCacheHits === 0
      ? 'Embedding cache: no window of the engine arm came from it (every document was new), so none did in the gateways.'
      : `Embedding cache: FAILED: ${engineCacheHits} windows of the engine arm came from it; the documents repeat and the comparison is unfair.`,
    `Measured part ${result.measuredSeconds} s, whole run ${result.durationSeconds} s. JSON: ${relative(process.cwd(), OUT)}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (!result.passed) process.exitCode = 1;
}

try {
  await main();
} catch (error) {
  process.stderr.write(`rerank-speed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
}
