/**
 * Main-text extraction benchmark: quality (F1, precision, recall) and speed of the extractor the
 * service runs, on two page sets kept outside the repository:
 *
 * - article-extraction: Zyte's 54 news pages (../shared/data/article-extraction), scored as Zyte's
 *   benchmark does. Timing: one warm-up pass, then R timed passes on one thread; a page's time is
 *   its median over the passes, mean and p95 over pages. A final pass sends every page through an
 *   ExtractorPool at once, to check the worker path gives the very same texts and to measure it.
 * - extraction-dev (issue 22): 1,343 pages of every type from 9 benchmarks
 *   (../shared/data/extraction-dev), scored as its score.py does, on one split (the report half by
 *   default; tune on `--split tune`), overall and per source, type and language, beside the
 *   reference figures and targets. Time per page in process (median, p95), then pages/s of the
 *   batch CLI (`searchgate extract --jsonl --workers N <files>`, a process of its own, start-up
 *   included) for each N of --batch-workers.
 *
 *   node dist/bench/extraction.js [--set all|article-extraction|extraction-dev] [--verbose]
 *       [--data DIR] [--rounds R] [--out FILE]                          article-extraction
 *       [--dev-data DIR] [--split report|tune|all] [--dev-rounds R]      extraction-dev
 *       [--batch-workers 2,1] [--dev-out FILE] [--predictions FILE] [--limit N]
 *
 * Each page goes through extractDocument (bytes → decode → HTML extraction), as fetched pages do.
 * --limit N takes the split's first N pages (a quick look, not a figure to quote); --batch-workers 0
 * skips the batch runs (tuning needs the scores only). --predictions writes {id: text} for the set's
 * own score.py (it holds the pages' text: keep it out of the repository).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ExtractorPool, extractDocument } from '../src/local/extract/index.js';
import type { ExtractedPage } from '../src/local/types.js';
import { runBatchCli } from './batch-cli.js';
import { machineWithLoad, round3 } from './index-bench-common.js';
import {
  DEFAULT_EXTRACTION_DEV_DIR,
  REFERENCE_SYSTEMS,
  REPORT_REFERENCE,
  REPORT_REFERENCE_PRECISION_RECALL,
  SPEED_TARGETS,
  SPLITS,
  devPagePath,
  devPageUrl,
  formatDevReport,
  groupScores,
  loadDevPages,
  readDevPageHtml,
  scoreDevPage,
  targetFor,
  titleScores,
  type DevPage,
  type Split,
} from './extraction-dev.js';
import {
  DEFAULT_ARTICLE_EXTRACTION_DIR,
  aggregateScore,
  compareTexts,
  loadBenchmarkPages,
  pagePrecision,
  pageRecall,
  type BenchmarkPage,
  type ShingleCounts,
} from './extraction-score.js';

const { values: args } = parseArgs({
  options: {
    set: { type: 'string', default: 'all' },
    data: { type: 'string', default: DEFAULT_ARTICLE_EXTRACTION_DIR },
    'dev-data': { type: 'string', default: DEFAULT_EXTRACTION_DEV_DIR },
    split: { type: 'string', default: 'report' },
    rounds: { type: 'string', default: '3' },
    'dev-rounds': { type: 'string', default: '1' },
    'batch-workers': { type: 'string', default: String(os.availableParallelism()) },
    out: { type: 'string', default: 'bench/results/extraction.json' },
    'dev-out': { type: 'string' },
    predictions: { type: 'string' },
    limit: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});
const SETS = ['all', 'article-extraction', 'extraction-dev'] as const;
if (!(SETS as readonly string[]).includes(args.set!)) throw new Error(`--set must be one of ${SETS.join(', ')}`);
if (!(SPLITS as readonly string[]).includes(args.split!)) throw new Error(`--split must be one of ${SPLITS.join(', ')}`);
const split = args.split as Split;
const rounds = Math.max(1, Number(args.rounds));
const devRounds = Math.max(1, Number(args['dev-rounds']));
const batchWorkers = args['batch-workers']!.split(',').map(Number).filter((count) => count >= 1);
const devOut = args['dev-out'] ?? (split === 'report' ? 'bench/results/extraction-dev.json' : `bench/results/extraction-dev.${split}.json`);

/** The built CLI beside this file's compiled copy: batch mode is measured as users run it. */
const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

function percentile(sorted: number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]!;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function writeResults(path: string, results: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}

async function runArticleExtraction(pages: BenchmarkPage[]): Promise<void> {
  const extract = (page: BenchmarkPage): Promise<ExtractedPage> =>
    // The benchmark's pages come without HTTP headers: the charset is found in the bytes.
    extractDocument(page.html, { url: page.url, contentType: 'text/html' });
  const loadBefore = os.loadavg()[0]!;

  for (const page of pages) await extract(page); // warm-up: JIT, lazy module loads

  const timings = pages.map(() => [] as number[]);
  const texts: string[] = [];
  for (let round = 0; round < rounds; round += 1) {
    for (const [index, page] of pages.entries()) {
      const started = performance.now();
      const extracted = await extract(page);
      timings[index]!.push(performance.now() - started);
      if (round === 0) texts.push(extracted.text);
    }
  }

  const counts = pages.map((page, index) => compareTexts(page.expectedText, texts[index]!));
  const score = aggregateScore(counts);
  const pageTimes = timings.map(median);
  const sortedTimes = [...pageTimes].sort((a, b) => a - b);
  const meanMs = pageTimes.reduce((sum, time) => sum + time, 0) / pageTimes.length;
  const p95Ms = percentile(sortedTimes, 0.95);

  const pool = new ExtractorPool();
  const poolStarted = performance.now();
  const poolPages = await Promise.all(pages.map((page) => pool.extract(page.html, { url: page.url, contentType: 'text/html' })));
  const poolSeconds = (performance.now() - poolStarted) / 1000;
  await pool.close();
  const poolMismatches = poolPages.filter((page, index) => page.text !== texts[index]).length;

  const perPage = pages.map((page, index) => {
    const { tp, fp, fn } = counts[index]!;
    return {
      id: page.id,
      url: page.url,
      precision: tp + fp > 0 ? round3(tp / (tp + fp)) : null,
      recall: tp + fn > 0 ? round3(tp / (tp + fn)) : null,
      ms: round3(pageTimes[index]!),
    };
  });
  if (args.verbose) {
    for (const page of perPage) console.log(`${page.id.slice(0, 8)} P=${page.precision} R=${page.recall} ${page.ms.toFixed(1)} ms  ${page.url}`);
  }

  const results = {
    benchmark: 'article-extraction (Zyte), pages available in ../shared/data',
    pages: pages.length,
    date: new Date().toISOString(),
    machine: machineWithLoad(loadBefore),
    f1: round3(score.f1),
    precision: round3(score.precision),
    recall: round3(score.recall),
    msPerPage: { mean: round3(meanMs), p95: round3(p95Ms), rounds },
    /** Of this process (the in-process passes); pool workers are separate threads of the same process. */
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    pool: { workers: Math.max(1, os.availableParallelism() - 1), pagesPerSecond: round3(pages.length / poolSeconds), textsDifferingFromInProcess: poolMismatches },
    perPage,
  };

  console.log(`pages          ${pages.length}`);
  console.log(`F1             ${score.f1.toFixed(3)}   precision ${score.precision.toFixed(3)}   recall ${score.recall.toFixed(3)}`);
  console.log(`ms/page        mean ${meanMs.toFixed(1)}   p95 ${p95Ms.toFixed(1)}   (median of ${rounds} rounds per page, one thread)`);
  console.log(`peak RSS       ${results.peakRssMb} MB`);
  console.log(`pool           ${results.pool.pagesPerSecond} pages/s with ${results.pool.workers} worker(s); texts differing from in-process: ${poolMismatches}`);
  const load = results.machine.loadAverage1m;
  console.log(`machine        ${results.machine.cpus} CPUs, ${results.machine.cpuModel}, Node ${process.version}, load ${load.before.toFixed(2)} → ${load.after.toFixed(2)}`);

  writeResults(args.out!, results);
  console.log(`results        ${args.out}`);
  if (poolMismatches > 0) process.exitCode = 1;
}

/** How many of the first pages are extracted once, untimed, before the timed pass (JIT, lazy module loads). */
const DEV_WARM_UP_PAGES = 20;

function perPageFigures(counts: ShingleCounts) {
  const { tp, fp, fn } = counts;
  const precision = tp + fp > 0 ? pagePrecision(counts) : null;
  const recall = tp + fn > 0 ? pageRecall(counts) : null;
  const f1 = precision !== null && recall !== null && precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { precision: precision === null ? null : round3(precision), recall: recall === null ? null : round3(recall), f1: round3(f1) };
}

async function runExtractionDev(pages: DevPage[]): Promise<void> {
  const directory = args['dev-data']!;
  const loadBefore = os.loadavg()[0]!;

  for (const page of pages.slice(0, DEV_WARM_UP_PAGES)) {
    await extractDocument(readDevPageHtml(directory, page.id), { url: devPageUrl(directory, page), contentType: 'text/html' });
  }

  const pageTimes: number[] = [];
  // CPU time as well as wall time: on a shared machine the wall time of a page grows with the
  // load (other processes take turns on the cores), its CPU time much less.
  const pageCpuTimes: number[] = [];
  const texts: string[] = [];
  const titles: (string | null)[] = [];
  for (const page of pages) {
    // Reading and gunzipping the stored file is not the extractor's time.
    const html = readDevPageHtml(directory, page.id);
    const times: number[] = [];
    const cpuTimes: number[] = [];
    for (let round = 0; round < devRounds; round += 1) {
      const started = performance.now();
      const cpuStarted = process.cpuUsage();
      const extracted = await extractDocument(html, { url: devPageUrl(directory, page), contentType: 'text/html' });
      const cpu = process.cpuUsage(cpuStarted);
      times.push(performance.now() - started);
      cpuTimes.push((cpu.user + cpu.system) / 1000);
      if (round === 0) {
        texts.push(extracted.text);
        titles.push(extracted.title);
      }
    }
    pageTimes.push(median(times));
    pageCpuTimes.push(median(cpuTimes));
  }
  const counts = pages.map((page, index) => scoreDevPage(page, texts[index]!));
  const report = groupScores(pages, counts);
  const titleReport = titleScores(pages, titles);
  const sortedTimes = [...pageTimes].sort((a, b) => a - b);
  const sortedCpuTimes = [...pageCpuTimes].sort((a, b) => a - b);
  const inProcess = {
    medianMs: round3(median(pageTimes)),
    p95Ms: round3(percentile(sortedTimes, 0.95)),
    cpuMedianMs: round3(median(pageCpuTimes)),
    cpuP95Ms: round3(percentile(sortedCpuTimes, 0.95)),
    rounds: devRounds,
  };

  const paths = pages.map((page) => devPagePath(directory, page.id));
  const batches = [];
  for (const workers of batchWorkers) {
    const run = await runBatchCli(CLI, paths, workers, { echoStderr: args.verbose ?? false });
    const batchCounts = pages.map((page, index) => scoreDevPage(page, run.textByPath.get(paths[index]!) ?? ''));
    const differs = (index: number) => (run.textByPath.get(paths[index]!) ?? '') !== texts[index];
    const differing = pages.filter((_, index) => differs(index)).length;
    // The CLI gets no page URL, so only pages without one must come out the same as in process.
    const differingWithoutUrl = pages.filter((page, index) => page.url === null && differs(index)).length;
    batches.push({
      workers,
      seconds: round3(run.seconds),
      pagesPerSecond: round3(run.pagesPerSecond),
      lines: run.lines,
      errorLines: run.errorLines,
      timeouts: run.timeouts,
      cpuSeconds: run.cpuSeconds,
      cpuMsPerPage: round3((run.cpuSeconds * 1000) / paths.length),
      loadAverage1m: run.loadAverage1m,
      exitCode: run.exitCode,
      f1: round3(aggregateScore(batchCounts).f1),
      textsDifferingFromInProcess: differing,
      textsDifferingAmongPagesWithoutUrl: differingWithoutUrl,
    });
  }
  const results = {
    benchmark: `extraction-dev (${directory}), split ${split}`,
    pages: pages.length,
    emptyTexts: texts.filter((text) => !text.trim()).length,
    date: new Date().toISOString(),
    machine: machineWithLoad(loadBefore),
    scores: report,
    titles: titleReport,
    reference: split === 'report' ? { systems: REFERENCE_SYSTEMS, f1: REPORT_REFERENCE, overallPrecisionRecall: REPORT_REFERENCE_PRECISION_RECALL } : null,
    inProcess,
    /** The batch CLI reads the files without their page URLs (file: URLs), hence its own F1. */
    batch: batches,
    speedTargets: SPEED_TARGETS,
    perPage: pages.map((page, index) => ({
      id: page.id,
      source: page.source,
      type: page.type,
      lang: page.lang,
      truthKind: page.truthKind,
      hasUrl: page.url !== null,
      ...perPageFigures(counts[index]!),
      empty: !texts[index]!.trim(),
      ms: round3(pageTimes[index]!),
      cpuMs: round3(pageCpuTimes[index]!),
    })),
  };

  if (args.verbose) {
    const worstFirst = [...results.perPage].sort((a, b) => a.f1 - b.f1);
    for (const page of worstFirst) {
      console.log(`${page.f1.toFixed(3)} P=${page.precision} R=${page.recall} ${page.ms.toFixed(1)} ms  ${page.type}/${page.source}/${page.lang}  ${page.id}`);
    }
  }
  const overall = report.all.all!;
  console.log(`\nextraction-dev, split ${split}: ${pages.length} pages, ${results.emptyTexts} with no text`);
  if (split === 'report') {
    const reference = REPORT_REFERENCE.all.all!;
    console.log(`overall F1 ${overall.f1.toFixed(3)} (target ${targetFor('all', 'all')}); reference ${REFERENCE_SYSTEMS}: ${reference.searchgate9fab6d4} / ${reference.trafilatura} / ${reference.readability}`);
  }
  console.log(formatDevReport(report, split));
  for (const [key, score] of Object.entries(titleReport)) {
    console.log(`${key === 'all' ? '\ntitles' : '      '}         ${key.padEnd(12)} same words ${score.exact.toFixed(3)}, word F1 ${score.wordF1.toFixed(3)} (${score.pages} pages with the source's title)`);
  }
  console.log(
    `\nin process     median ${inProcess.medianMs.toFixed(1)} ms/page, p95 ${inProcess.p95Ms.toFixed(1)} ms wall; CPU median ${inProcess.cpuMedianMs.toFixed(1)} ms, p95 ${inProcess.cpuP95Ms.toFixed(1)} ms ` +
      `(one thread; target median ≤ ${SPEED_TARGETS.medianMsPerPage} ms)`,
  );
  for (const batch of batches) {
    console.log(
      `batch CLI      ${batch.pagesPerSecond.toFixed(1)} pages/s with ${batch.workers} worker(s) (${batch.seconds.toFixed(1)} s, start-up included; target ≥ ${SPEED_TARGETS.batchPagesPerSecond}); ` +
        `${batch.cpuMsPerPage.toFixed(1)} ms of CPU per page; ` +
        `F1 ${batch.f1.toFixed(3)} without page URLs, ${batch.textsDifferingFromInProcess} texts differ from in-process (${batch.textsDifferingAmongPagesWithoutUrl} of pages without a URL), ${batch.errorLines} error lines, ${batch.timeouts} over the time limit, exit ${batch.exitCode}; ` +
        `load ${batch.loadAverage1m.before.toFixed(2)} → ${batch.loadAverage1m.after.toFixed(2)}`,
    );
  }
  const load = results.machine.loadAverage1m;
  console.log(`machine        ${results.machine.cpus} CPUs, ${results.machine.cpuModel}, ${results.machine.memoryGiB} GiB, Node ${process.version}, load ${load.before.toFixed(2)} → ${load.after.toFixed(2)}`);
  writeResults(devOut, results);
  console.log(`results        ${devOut}`);
  if (args.predictions) {
    writeResults(args.predictions, Object.fromEntries(pages.map((page, index) => [page.id, texts[index]!])));
    console.log(`predictions    ${args.predictions} (python3 ${directory}/score.py ${args.predictions} --split ${split})`);
  }
}

/** Both sets are looked for before anything runs, so a missing folder is said at once, in one line. */
function loadOrStop<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    console.error(`bench/extraction: ${(error as Error).message}`);
    process.exit(1);
  }
}
const devPages =
  args.set === 'article-extraction'
    ? null
    : loadOrStop(() => loadDevPages(args['dev-data']!, split)).slice(0, args.limit === undefined ? undefined : Number(args.limit));
const articlePages = args.set === 'extraction-dev' ? null : loadOrStop(() => loadBenchmarkPages(args.data!));

if (articlePages) await runArticleExtraction(articlePages);
if (devPages) await runExtractionDev(devPages);
