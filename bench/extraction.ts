/**
 * Main-text extraction benchmark: quality (F1, precision, recall as Zyte's article-extraction
 * benchmark scores them) and speed (ms per page) of the extractor the service runs, on the pages of
 * ../shared/data/article-extraction.
 *
 *   node dist/bench/extraction.js [--data DIR] [--rounds R] [--out FILE] [--verbose]
 *
 * Each page goes through extractDocument (bytes → decode → HTML extraction), as fetched pages do.
 * Timing: one warm-up pass, then R timed passes on one thread; a page's time is its median over the
 * passes, and the mean and p95 are over pages. A final pass sends every page through an
 * ExtractorPool at once, to check that the worker path gives the very same texts and to measure its
 * throughput.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ExtractorPool, extractDocument } from '../src/local/extract/index.js';
import type { ExtractedPage } from '../src/local/types.js';
import { DEFAULT_ARTICLE_EXTRACTION_DIR, aggregateScore, compareTexts, loadBenchmarkPages, type BenchmarkPage } from './extraction-score.js';

const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: DEFAULT_ARTICLE_EXTRACTION_DIR },
    rounds: { type: 'string', default: '3' },
    out: { type: 'string', default: 'bench/results/extraction.json' },
    verbose: { type: 'boolean', default: false },
  },
});
const rounds = Math.max(1, Number(args.rounds));

function extract(page: BenchmarkPage): Promise<ExtractedPage> {
  // The benchmark's pages come without HTTP headers: the charset is found in the bytes.
  return extractDocument(page.html, { url: page.url, contentType: 'text/html' });
}

function percentile(sorted: number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]!;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const round3 = (value: number) => Math.round(value * 1000) / 1000;

const pages = loadBenchmarkPages(args.data!);
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
const loadAfter = os.loadavg()[0]!;

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
  machine: {
    nproc: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverage1m: { before: round3(loadBefore), after: round3(loadAfter) },
  },
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
console.log(`machine        ${results.machine.nproc} CPUs, ${results.machine.cpu}, Node ${process.version}, load ${loadBefore.toFixed(2)} → ${loadAfter.toFixed(2)}`);

mkdirSync(dirname(args.out!), { recursive: true });
writeFileSync(args.out!, `${JSON.stringify(results, null, 2)}\n`);
console.log(`results        ${args.out}`);
if (poolMismatches > 0) process.exitCode = 1;
