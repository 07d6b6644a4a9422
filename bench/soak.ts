/**
 * A steady mixed load on the embedded default for a while, and the gateway's RSS over that time
 * (issue 18): does memory level off, or keep climbing?
 *
 * The gateway runs in a child process as in bench/fuzz.ts. A fixed rate of requests goes to it:
 * most are what clients send (searches of a small set of queries, so that the cache answers some;
 * reranks of 5 to 100 documents; MCP tool calls), the rest hostile requests
 * (test/helpers/hostile-requests.ts). RSS is sampled every few seconds and reported as a series,
 * with the baseline, the peak, and the slope per minute over the second half of the run (a leak
 * shows as a slope that stays above zero once caches are full).
 *
 *   npm run bench:soak                                  # 5 minutes at 8 requests/s
 *   npm run bench:soak -- --minutes 30 --rps 40 --out /tmp/soak.json
 *   npm run bench:soak -- --baseline-dist /tmp/base/dist   # the base build first, then this one
 *
 * Flags: --minutes M (5) --rps R (8) --hostile-share F (0.3) --max-in-flight K (16) --sample-ms MS (5000) --idle-ms MS (60000)
 *        --seed S (18) --pages P (600) --model DIR --baseline-dist DIR --out FILE (bench/results/soak.json)
 */
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { seededRandom } from '../src/util/random.js';
import { filler, hostileRequest, sendHostile, type HostileRequest } from '../test/helpers/hostile-requests.js';
import { linearFit, machineDescription, startWatchdog } from './index-bench-common.js';
import { buildIndex, embeddedDefaultConfig, finishRun, loadAverage, memoryGauges, memoryMap, nodeCommand, sampleRss, sleep, startGatewayProcess, THIS_DIST } from './memory-common.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    rps: { type: 'string', default: '8' },
    'hostile-share': { type: 'string', default: '0.3' },
    'max-in-flight': { type: 'string', default: '16' },
    'sample-ms': { type: 'string', default: '5000' },
    'idle-ms': { type: 'string', default: '60000' },
    seed: { type: 'string', default: '18' },
    pages: { type: 'string', default: '600' },
    model: { type: 'string', default: process.env.SEARCHGATE_TEST_MODEL_DIR ?? 'models/all-minilm-l6-v2' },
    'baseline-dist': { type: 'string' },
    out: { type: 'string', default: 'bench/results/soak.json' },
  },
});
const MINUTES = Number(values.minutes);
const RPS = Number(values.rps);
const HOSTILE_SHARE = Number(values['hostile-share']);
const MAX_IN_FLIGHT = Number(values['max-in-flight']);
const SEED = Number(values.seed);
const KEY = 'sk-bench-soak-0123456789';
const MODEL = resolve(values.model!);
startWatchdog(MINUTES * 60 * (values['baseline-dist'] ? 2 : 1) + 900, 'soak');

const QUERIES = ['capital of France', 'potassium in bananas', 'river Seine', 'Lyon cuisine', 'HTTP semantics', 'TypeScript strict mode', 'page 42', 'related matters'];

/** What clients send, the i-th time: the query set is small, so searches hit the cache now and then. */
function everydayRequest(i: number): HostileRequest {
  const query = `${QUERIES[i % QUERIES.length]}${i % 3 === 0 ? '' : ` ${i % 97}`}`;
  const post = (path: string, body: unknown, extra: Record<string, string> = {}): HostileRequest => ({
    method: 'POST',
    path,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...extra },
    body: Buffer.from(JSON.stringify(body)),
    target: path,
    badEncoding: false,
  });
  switch (i % 4) {
    case 0:
    case 1:
      return post('/v1/web-search', { query, count: 10 });
    case 2: {
      const count = 5 + (i % 96);
      return post('/v1/rerank', { query, documents: Array.from({ length: count }, (_, d) => filler(i * 131 + d, 200 + ((i + d) % 1800))), top_n: 5 });
    }
    default:
      return post(
        '/mcp',
        { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'web_search', arguments: { query, count: 5 } } },
        { accept: 'application/json, text/event-stream' },
      );
  }
}

const arbitrary = hostileRequest({ key: KEY, maxBodyBytes: 1_048_576, badEncodings: true });
/** Hostile requests, a batch at a time, for as long as the run needs them. */
function* hostileRequests(): Generator<HostileRequest> {
  for (let batch = 0; ; batch++) yield* fc.sample(arbitrary, { seed: SEED + batch, numRuns: 50 });
}

const work = mkdtempSync(join(os.tmpdir(), 'searchgate-bench-soak-'));
console.log(`building an index of ${values.pages} pages with ${MODEL}`);
const index = buildIndex(join(work, 'corpus'), MODEL, Number(values.pages));

async function soak(name: string, dist: string) {
  const stateDirectory = mkdtempSync(join(work, 'state-'));
  const gateway = await startGatewayProcess({ dist, config: embeddedDefaultConfig({ key: KEY, index, model: MODEL, stateDirectory }) });
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });
  try {
    await sendHostile(gateway.url, everydayRequest(2), { agent });
    await sleep(5000);
    const rss = sampleRss(gateway.pid, Number(values['sample-ms']));
    const baselineMiB = rss.now();
    const mapBefore = memoryMap(gateway.pid);
    const loadAtStart = loadAverage();
    const hostile = hostileRequests();
    const random = seededRandom(SEED);
    const byStatus = new Map<string, number>();
    let inFlight = 0;
    let skipped = 0;
    let sent = 0;
    const running = new Set<Promise<void>>();
    const started = performance.now();
    const endAt = started + MINUTES * 60_000;
    // Open loop: a request every 1/rps seconds, whatever the gateway's speed; past max-in-flight one is skipped (and counted).
    for (let next = started; next < endAt; next += 1000 / RPS) {
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
      if (inFlight >= MAX_IN_FLIGHT) {
        skipped++;
        continue;
      }
      const request = random() < HOSTILE_SHARE ? hostile.next().value! : everydayRequest(sent);
      sent++;
      inFlight++;
      const call = sendHostile(gateway.url, request, { agent, timeoutMs: 60_000 }).then((answer) => {
        inFlight--;
        const status = answer.status === null ? 'none' : String(answer.status);
        byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
      });
      running.add(call);
      void call.finally(() => running.delete(call));
      if (sent % (RPS * 60) === 0) console.log(`${name}: ${Math.round((performance.now() - started) / 60_000)} min, ${sent} sent, RSS ${rss.now()} MiB`);
    }
    await Promise.all(running);
    const loadAtEnd = loadAverage();
    const atEndMiB = rss.now();
    const loadSamples = rss.series.length;
    // Then quiet, as after a burst: does RSS come back down once the work is done?
    await sleep(Number(values['idle-ms']));
    const afterIdleMiB = rss.now();
    rss.stop();
    const series = rss.series;
    const underLoad = series.slice(0, loadSamples);
    const halfway = underLoad[underLoad.length - 1]!.s / 2;
    const secondHalf = underLoad.filter((sample) => sample.s >= halfway).map((sample): [number, number] => [sample.s / 60, sample.rssMiB]);
    const result = {
      name,
      dist,
      launched: nodeCommand(dist).launched,
      minutes: MINUTES,
      requests: sent,
      skippedAtMaxInFlight: skipped,
      rssMiB: {
        baseline: baselineMiB,
        peak: Math.max(...underLoad.map((sample) => sample.rssMiB)),
        highWater: rss.highWaterMiB(),
        atEnd: atEndMiB,
        afterIdle: afterIdleMiB,
        idleSeconds: Number(values['idle-ms']) / 1000,
        slopePerMinuteSecondHalf: Math.round(linearFit(secondHalf).slope * 10) / 10,
      },
      byStatus: Object.fromEntries([...byStatus].sort()),
      unhandledErrors: Object.fromEntries(gateway.unhandled),
      gauges: await memoryGauges(gateway.url),
      memoryMap: { before: mapBefore, after: memoryMap(gateway.pid) },
      loadAverage: { start: loadAtStart, end: loadAtEnd },
      series,
    };
    console.log(JSON.stringify({ ...result, series: `${series.length} samples` }, null, 1));
    return result;
  } finally {
    agent.destroy();
    await gateway.stop();
  }
}

const results = [];
if (values['baseline-dist']) results.push(await soak('baseline', resolve(values['baseline-dist'])));
results.push(await soak('this build', THIS_DIST));
finishRun(work, values.out!, { date: new Date().toISOString(), machine: machineDescription(), rps: RPS, hostileShare: HOSTILE_SHARE, maxInFlight: MAX_IN_FLIGHT, seed: SEED, results });
process.exit(0);
