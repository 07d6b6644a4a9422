/**
 * Latency of date-filtered searches on the local index (issue 20, item 4): a synthetic corpus on
 * local disk (dates over ten years, many hosts of skewed sizes: bench/index-bench-common.ts), and
 * the same queries under windows of each shape the filters translate differently: rolling windows
 * that start and end mid-day (a day, a week, a month, a year), whole days from mid-month to
 * mid-month across years, whole years, and a rolling year that also excludes the three biggest
 * sites. One client, AND matching, top 20 with snippets, as bench/index-speed.ts measures.
 *
 *   npm run bench:date-filters                         # 200k pages, 2,000 hosts
 *   npm run bench:date-filters -- --pages 20000        # a quick run
 *   npm run bench:date-filters -- --index-dir DIR --reuse-index   # queries only, on the index a run left in DIR
 *
 * Comparing two builds (the labels before and after issue 20): build each one's index once with
 * --index-dir, then run their queries in turn with --reuse-index, so that both see the same load.
 *
 * Flags: --pages N (200000) --hosts N (2000) --queries N (200) --index-dir DIR (kept; default a fresh
 *        temporary directory, removed at the end) --reuse-index (skip the load when DIR holds --pages
 *        pages) --out FILE (bench/results/date-filters.json) --max-seconds S (3600)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openLocalIndex } from '../src/local/index/index.js';
import type { IndexQuery } from '../src/local/types.js';
import { seededRandom } from '../src/util/random.js';
import { machineDescription, startWatchdog, SYNTHETIC_VOCABULARY, syntheticHost, syntheticPages } from './index-bench-common.js';
import { latencySummary } from './latency.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { values: flags } = parseArgs({
  options: {
    pages: { type: 'string', default: '200000' },
    hosts: { type: 'string', default: '2000' },
    queries: { type: 'string', default: '200' },
    'index-dir': { type: 'string' },
    'reuse-index': { type: 'boolean', default: false },
    out: { type: 'string', default: resolve(REPO_ROOT, 'bench/results/date-filters.json') },
    'max-seconds': { type: 'string', default: '3600' },
  },
});
const PAGES = Number(flags.pages);
const HOSTS = Number(flags.hosts);
const QUERIES = Number(flags.queries);
const DATES = { fromMs: Date.UTC(2016, 0, 1), toMs: Date.UTC(2026, 0, 1) };
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const LOAD_BATCH = 20_000;

type Window = NonNullable<IndexQuery['window']>;

/** A window shape: from a random instant inside the corpus's dates, the window a query of that kind asks for. */
const WINDOW_KINDS: Record<string, ((at: number, random: () => number) => Window) | null> = {
  'none': null,
  'rolling day (mid-day ends)': (at) => ({ fromMs: at - DAY_MS, toMs: at }),
  'rolling week': (at) => ({ fromMs: at - 7 * DAY_MS, toMs: at }),
  'rolling month': (at) => ({ fromMs: at - 30 * DAY_MS, toMs: at }),
  'rolling year': (at) => ({ fromMs: at - 365 * DAY_MS, toMs: at }),
  'whole days, mid-month to mid-month, 40-800 days': (at, random) => {
    const from = Math.floor(at / DAY_MS) * DAY_MS - 800 * DAY_MS;
    return { fromMs: from, toMs: from + (40 + Math.floor(random() * 760)) * DAY_MS };
  },
  'whole years (3)': (at) => {
    const year = new Date(at).getUTCFullYear() - 3;
    return { fromMs: Date.UTC(year, 0, 1), toMs: Date.UTC(year + 3, 0, 1) };
  },
  'rolling year, 3 biggest sites excluded': (at) => ({ fromMs: at - 365 * DAY_MS, toMs: at }),
};
const BIGGEST_SITES = [0, 1, 3].map(syntheticHost);

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

async function main(): Promise<void> {
  startWatchdog(Number(flags['max-seconds']), 'date-filters');
  const machine = machineDescription();
  const directory = flags['index-dir'] ?? mkdtempSync(join(os.tmpdir(), 'searchgate-date-filters-'));
  const index = await openLocalIndex(directory);
  try {
    const loadStarted = performance.now();
    const reused = flags['reuse-index'] && (await index.stats()).documents === PAGES;
    if (!reused) {
      for (let start = 0; start < PAGES; start += LOAD_BATCH) {
        await index.append(syntheticPages({ pages: Math.min(LOAD_BATCH, PAGES - start), hosts: HOSTS, ...DATES, firstPage: start }));
      }
      await index.fold({ keepVersionsMs: 0 });
    }
    const loadSeconds = reused ? null : round((performance.now() - loadStarted) / 1000, 1);
    console.log(reused ? `${PAGES} pages in ${directory}, reused` : `${PAGES} pages on ${HOSTS} hosts loaded and folded in ${loadSeconds} s`);

    const random = seededRandom(20261126);
    // Words of middling frequency: each query matches a few hundred to a few thousand pages.
    const word = () => SYNTHETIC_VOCABULARY[30 + Math.floor(random() * 400)]!;
    const queries = Array.from({ length: QUERIES }, () => ({
      text: random() < 0.5 ? word() : `${word()} ${word()}`,
      at: DATES.fromMs + 3 * 365 * DAY_MS + Math.floor(random() * 6 * 365 * DAY_MS),
      random: random(),
    }));
    const search = (query: (typeof queries)[number], kind: string) => {
      const shape = WINDOW_KINDS[kind]!;
      const window = shape ? shape(query.at, seededRandom(Math.floor(query.random * 2 ** 32))) : null;
      const excludeDomains = kind.includes('excluded') ? BIGGEST_SITES : [];
      return index.search({ query: query.text, limit: 20, offset: 0, includeDomains: [], excludeDomains, window, match: 'all' });
    };
    for (const query of queries.slice(0, 30)) for (const kind of Object.keys(WINDOW_KINDS)) await search(query, kind);

    const results: Record<string, unknown> = {};
    for (const kind of Object.keys(WINDOW_KINDS)) {
      const samples: number[] = [];
      let hits = 0;
      for (const query of queries) {
        const started = performance.now();
        const found = await search(query, kind);
        samples.push(performance.now() - started);
        hits += found.hits.length;
      }
      const summary = latencySummary(samples);
      results[kind] = { ...summary, meanHits: round(hits / queries.length, 1) };
      console.log(`${kind.padEnd(50)} p50 ${summary.p50Ms.toFixed(1)} ms  p90 ${summary.p90Ms.toFixed(1)} ms  p99 ${summary.p99Ms.toFixed(1)} ms  hits ${round(hits / queries.length, 1)}`);
    }
    const report = {
      bench: 'date-filters',
      at: new Date().toISOString(),
      machine,
      loadAverageAtEnd: os.loadavg().map((load) => round(load)),
      settings: { pages: PAGES, hosts: HOSTS, queries: QUERIES, dates: '2016-01-01..2026-01-01', biggestSites: BIGGEST_SITES },
      loadSeconds,
      results,
    };
    mkdirSync(dirname(flags.out!), { recursive: true });
    writeFileSync(flags.out!, JSON.stringify(report, null, 2) + '\n');
    console.log(`wrote ${flags.out}`);
  } finally {
    await index.close();
    if (!flags['index-dir']) rmSync(directory, { recursive: true, force: true });
  }
}

await main();
