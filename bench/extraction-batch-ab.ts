/**
 * Two builds' batch CLIs side by side: `searchgate extract --jsonl --workers N` over the page files of
 * an extraction-dev split, each build's process in turn (which goes first alternates pair by pair).
 * It compares what extraction-ab cannot: a batch process's own costs, such as its start-up and each
 * worker's cold start, which a warmed-up process never pays. Each pair gives the ratio of the two
 * runs' CPU time (worker threads included) and of their wall time; drift of the host's speed falls on
 * both runs of a pair alike. Every page's line (text, markdown with --markdown, metadata) is compared
 * between the builds.
 *
 *   node dist/bench/extraction-batch-ab.js --baseline DIR [--split tune|report|all] [--pairs 6]
 *       [--workers 2] [--markdown] [--limit N] [--repeat K] [--out FILE]
 *
 * --limit N takes the split's first N pages, --repeat K lists them K times over: a batch's fixed costs
 * weigh more in a short batch, and less in a long one.
 * DIR is another checkout with `dist/` built, as for extraction-ab.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runBatchCli, type BatchRun } from './batch-cli.js';
import { DEFAULT_EXTRACTION_DEV_DIR, SPLITS, devPagePath, loadDevPages, type Split } from './extraction-dev.js';
import { machineWithLoad, round3 } from './index-bench-common.js';

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    'dev-data': { type: 'string', default: DEFAULT_EXTRACTION_DEV_DIR },
    split: { type: 'string', default: 'report' },
    pairs: { type: 'string', default: '6' },
    workers: { type: 'string', default: String(os.availableParallelism()) },
    markdown: { type: 'boolean', default: false },
    limit: { type: 'string' },
    repeat: { type: 'string', default: '1' },
    out: { type: 'string', default: 'bench/results/extraction-batch-ab.json' },
  },
});
if (!args.baseline) throw new Error('--baseline DIR is required: a checkout of the build to compare against, with dist/ built');
if (!(SPLITS as readonly string[]).includes(args.split!)) throw new Error(`--split must be one of ${SPLITS.join(', ')}`);
const pairs = Math.max(1, Number(args.pairs));
const workers = Math.max(1, Number(args.workers));

const CURRENT_CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const BASELINE_CLI = resolve(args.baseline, 'dist/src/cli/main.js');
const directory = args['dev-data']!;
const splitPaths = loadDevPages(directory, args.split as Split)
  .slice(0, args.limit === undefined ? undefined : Math.max(1, Number(args.limit)))
  .map((page) => devPagePath(directory, page.id));
const paths = Array.from({ length: Math.max(1, Number(args.repeat)) }, () => splitPaths).flat();
const extraArgs = args.markdown ? ['--format', 'markdown'] : [];

const run = (cli: string) => runBatchCli(cli, paths, workers, { extraArgs });

/** Pages whose line differs between the two runs, or that one run lacks. */
function differingLines(baseline: BatchRun, current: BatchRun): number {
  return splitPaths.filter((path) => {
    const line = baseline.lineByPath.get(path);
    return line === undefined || line !== current.lineByPath.get(path);
  }).length;
}

const summary = (batch: BatchRun) => ({
  seconds: round3(batch.seconds),
  cpuSeconds: batch.cpuSeconds,
  pagesPerSecond: round3(batch.pagesPerSecond),
  errorLines: batch.errorLines,
  exitCode: batch.exitCode,
  loadAverage1m: batch.loadAverage1m,
});

interface PairResult {
  pair: number;
  baselineFirst: boolean;
  baseline: ReturnType<typeof summary>;
  current: ReturnType<typeof summary>;
  cpuRatio: number;
  wallRatio: number;
  linesDiffering: number;
}

const loadBefore = os.loadavg()[0]!;
const results: PairResult[] = [];
for (let pair = 0; pair < pairs; pair += 1) {
  const baselineFirst = pair % 2 === 0;
  const first = await run(baselineFirst ? BASELINE_CLI : CURRENT_CLI);
  const second = await run(baselineFirst ? CURRENT_CLI : BASELINE_CLI);
  const [baseline, current] = baselineFirst ? [first, second] : [second, first];
  const result: PairResult = {
    pair: pair + 1,
    baselineFirst,
    baseline: summary(baseline),
    current: summary(current),
    cpuRatio: round3(current.cpuSeconds / baseline.cpuSeconds),
    wallRatio: round3(current.seconds / baseline.seconds),
    linesDiffering: differingLines(baseline, current),
  };
  results.push(result);
  console.log(
    `pair ${result.pair}: baseline ${baseline.cpuSeconds.toFixed(1)} s of CPU in ${baseline.seconds.toFixed(1)} s, this build ${current.cpuSeconds.toFixed(1)} s in ${current.seconds.toFixed(1)} s; ` +
      `CPU ratio ${result.cpuRatio.toFixed(3)}, wall ratio ${result.wallRatio.toFixed(3)}; ${result.linesDiffering} lines differ`,
  );
}

const sum = (pick: (result: PairResult) => number) => results.reduce((total, result) => total + pick(result), 0);
const cpuRatio = sum((result) => result.current.cpuSeconds) / sum((result) => result.baseline.cpuSeconds);
const wallRatio = sum((result) => result.current.seconds) / sum((result) => result.baseline.seconds);
const machine = machineWithLoad(loadBefore);
console.log(
  `${args.split}: ${paths.length} pages, ${workers} worker(s), ${pairs} pair(s): this build's batch takes ${cpuRatio.toFixed(3)} times the baseline's CPU ` +
    `and ${wallRatio.toFixed(3)} times its wall time (${results.filter((result) => result.cpuRatio < 1).length} of ${pairs} pairs lower); ` +
    `lines differing: ${Math.max(...results.map((result) => result.linesDiffering))}; load ${loadBefore.toFixed(2)} → ${machine.loadAverage1m.after.toFixed(2)}`,
);
writeFileSync(
  args.out!,
  `${JSON.stringify({ benchmark: 'extraction-batch-ab', baseline: resolve(args.baseline), split: args.split, pages: paths.length, workers, markdown: args.markdown, date: new Date().toISOString(), machine, pairs: results, cpuRatio: round3(cpuRatio), wallRatio: round3(wallRatio) }, null, 2)}\n`,
);
