/**
 * Hostile traffic against the embedded default, and what it does to the gateway's memory (issue 18).
 *
 * The gateway runs in a child process on the embedded default (a small local index with vectors,
 * the local ONNX model for rerank and the query vectors, the embedded account store, one operator
 * key). A few concurrent clients send it N hostile requests over every route
 * (test/helpers/hostile-requests.ts: random JSON, bodies and document lists up to the body limit,
 * long queries, wrong types, odd headers, methods and paths, bad compressed bodies). Its RSS is read
 * from /proc every second. Reported: RSS at the baseline (started and warmed up), the peak (sampled,
 * and the kernel's high-water mark), and after an idle pause; answers by status; every 5xx with its
 * route; requests that got no answer; the "unhandled error" lines the gateway logged; load average.
 *
 *   npm run bench:fuzz                                   # 10,000 requests (~10-15 min on 2 cores)
 *   npm run bench:fuzz -- --n 2000 --out /tmp/fuzz.json
 *   npm run bench:fuzz -- --baseline-dist /tmp/base/dist # the base build first, then this one, in one run
 *   npm run bench:fuzz -- --variants variants.json       # [{name, dist?, env?, nodeOptions?, launcher?, config?}, …]
 *
 * Flags: --n N (10000) --concurrency C (4) --seed S (18) --idle-ms MS (60000) --sample-ms MS (1000)
 *        --pages P (600: pages in the index) --model DIR (models/all-minilm-l6-v2) --max-seconds S (3600)
 *        --no-bad-encodings (leave out bodies that do not decompress) --out FILE (bench/results/fuzz.json)
 */
import http from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { hostileRequest, sendHostile, type HostileRequest } from '../test/helpers/hostile-requests.js';
import { machineDescription, startWatchdog } from './index-bench-common.js';
import { buildIndex, embeddedDefaultConfig, finishRun, loadAverage, memoryGauges, memoryMap, nodeCommand, sampleRss, sleep, startGatewayProcess, THIS_DIST } from './memory-common.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '4' },
    seed: { type: 'string', default: '18' },
    'idle-ms': { type: 'string', default: '60000' },
    'sample-ms': { type: 'string', default: '1000' },
    pages: { type: 'string', default: '600' },
    model: { type: 'string', default: process.env.SEARCHGATE_TEST_MODEL_DIR ?? 'models/all-minilm-l6-v2' },
    'baseline-dist': { type: 'string' },
    variants: { type: 'string' },
    'no-bad-encodings': { type: 'boolean', default: false },
    'max-seconds': { type: 'string', default: '3600' },
    out: { type: 'string', default: 'bench/results/fuzz.json' },
  },
});
const N = Number(values.n);
const CONCURRENCY = Number(values.concurrency);
const SEED = Number(values.seed);
const KEY = 'sk-bench-fuzz-0123456789';
const MAX_BODY_BYTES = 1_048_576;
const MODEL = resolve(values.model!);
startWatchdog(Number(values['max-seconds']), 'fuzz');

/** One gateway to measure: a build, and what is set around it. */
interface Variant {
  name: string;
  dist?: string;
  env?: Record<string, string>;
  nodeOptions?: string[];
  /** false: under plain `node`, without the process settings of the build's launcher (bin/searchgate-node). */
  launcher?: boolean;
  /** Laid over the embedded default, object by object. */
  config?: Record<string, unknown>;
}

function variantsToRun(): Variant[] {
  if (values.variants) return JSON.parse(readFileSync(values.variants, 'utf8')) as Variant[];
  const baseline = values['baseline-dist'] ? [{ name: 'baseline', dist: resolve(values['baseline-dist']) }] : [];
  return [...baseline, { name: 'this build' }];
}

const work = mkdtempSync(join(os.tmpdir(), 'searchgate-bench-fuzz-'));
console.log(`building an index of ${values.pages} pages with ${MODEL}`);
const index = buildIndex(join(work, 'corpus'), MODEL, Number(values.pages));
const arbitrary = hostileRequest({ key: KEY, maxBodyBytes: MAX_BODY_BYTES, badEncodings: !values['no-bad-encodings'] });

/** The same N requests for every variant, made in batches so that at most one batch is held. */
function* requests(): Generator<HostileRequest> {
  const batch = 50;
  for (let start = 0; start < N; start += batch) yield* fc.sample(arbitrary, { seed: SEED + start, numRuns: Math.min(batch, N - start) });
}

/** `over` laid on `base`, object by object. */
function merged(base: Record<string, unknown>, over: Record<string, unknown> = {}): Record<string, unknown> {
  const config: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const under = base[key];
    const objects = [under, value].every((part) => part !== null && typeof part === 'object' && !Array.isArray(part));
    config[key] = objects ? merged(under as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  return config;
}

async function measure(variant: Variant) {
  const stateDirectory = mkdtempSync(join(work, 'state-'));
  const config = merged(embeddedDefaultConfig({ key: KEY, index, model: MODEL, stateDirectory }), variant.config);
  const dist = variant.dist ?? THIS_DIST;
  const gateway = await startGatewayProcess({ dist, config, env: variant.env ?? {}, nodeOptions: variant.nodeOptions ?? [], launcher: variant.launcher });
  const rss = sampleRss(gateway.pid, Number(values['sample-ms']));
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    // Warm: the model, the index and the JIT have done one of everything before the baseline.
    for (const body of [{ query: 'capital of France', count: 10 }, { query: 'river', documents: ['the Seine', 'bananas'] }]) {
      const path = 'documents' in body ? '/v1/rerank' : '/v1/web-search';
      await sendHostile(gateway.url, { method: 'POST', path, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(body)), target: path, badEncoding: false }, { agent });
    }
    await sleep(5000);
    const baselineMiB = rss.now();
    const gaugesBefore = await memoryGauges(gateway.url);
    const mapBefore = memoryMap(gateway.pid);
    const loadAtStart = loadAverage();
    console.log(`${variant.name}: pid ${gateway.pid}, baseline RSS ${baselineMiB} MiB`);

    const byStatus = new Map<string, number>();
    const byTarget = new Map<string, Record<string, number>>();
    const serverErrors = new Map<string, { target: string; method: string; status: number; badEncoding: boolean; count: number }>();
    const noAnswer: Array<{ target: string; method: string; error: string }> = [];
    const started = performance.now();
    const pending = requests();
    let sent = 0;
    const client = async () => {
      for (let next = pending.next(); !next.done; next = pending.next()) {
        const request = next.value;
        const answer = await sendHostile(gateway.url, request, { agent, timeoutMs: 60_000 });
        sent++;
        const status = answer.status === null ? 'none' : String(answer.status);
        byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
        const counts = byTarget.get(request.target) ?? {};
        counts[status] = (counts[status] ?? 0) + 1;
        byTarget.set(request.target, counts);
        if (answer.status === null) noAnswer.push({ target: request.target, method: request.method, error: answer.error ?? '' });
        else if (answer.status >= 500) {
          const key = `${answer.status} ${request.method} ${request.target} ${request.badEncoding}`;
          const known = serverErrors.get(key) ?? { target: request.target, method: request.method, status: answer.status, badEncoding: request.badEncoding, count: 0 };
          known.count++;
          serverErrors.set(key, known);
        }
        if (sent % 1000 === 0) console.log(`${variant.name}: ${sent} sent, RSS ${rss.now()} MiB, ${Math.round((performance.now() - started) / 1000)} s`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, client));
    const seconds = (performance.now() - started) / 1000;
    const loadAtEnd = loadAverage();
    const endMiB = rss.now();
    const peakMiB = Math.max(...rss.series.map((sample) => sample.rssMiB));
    agent.destroy();
    await sleep(Number(values['idle-ms']));
    const finalMiB = rss.now();
    const gaugesAfter = await memoryGauges(gateway.url);
    const mapAfter = memoryMap(gateway.pid);
    const result = {
      variant: { ...variant, dist, launched: nodeCommand(dist, variant.launcher).launched },
      requests: sent,
      seconds: Math.round(seconds),
      rssMiB: { baseline: baselineMiB, peak: peakMiB, highWater: rss.highWaterMiB(), atEnd: endMiB, final: finalMiB, idleSeconds: Number(values['idle-ms']) / 1000 },
      byStatus: Object.fromEntries([...byStatus].sort()),
      byRoute: Object.fromEntries([...byTarget].sort()),
      serverErrors: [...serverErrors.values()].sort((a, b) => b.count - a.count),
      noAnswer,
      unhandledErrors: Object.fromEntries(gateway.unhandled),
      gauges: { before: gaugesBefore, after: gaugesAfter },
      memoryMap: { before: mapBefore, after: mapAfter },
      loadAverage: { start: loadAtStart, end: loadAtEnd },
      series: rss.series,
    };
    console.log(JSON.stringify({ ...result, series: `${result.series.length} samples` }, null, 1));
    return result;
  } finally {
    rss.stop();
    await gateway.stop();
  }
}

const results = [];
for (const variant of variantsToRun()) results.push(await measure(variant));
finishRun(work, values.out!, { date: new Date().toISOString(), machine: machineDescription(), n: N, concurrency: CONCURRENCY, seed: SEED, maxBodyBytes: MAX_BODY_BYTES, results });
process.exit(0);
