/**
 * Where the memory of a long `index add` goes (issue 24, "bounded memory"): the bench corpus, K
 * times over (each copy's URLs and texts made distinct), written through the writer into one index,
 * with full text alone (the fold is the same with vectors, and this takes minutes, not hours), in
 * two layouts side by side, each in a process of its own: one table, and shards of --shard-pages.
 * LanceDB's caches are held small in both (--cache-mib), so that what is left is the writer's and
 * the folds' own memory. RSS, the JavaScript heap and external memory are sampled every second and
 * reported as the highest value within each 50k pages written.
 *
 *   npm run bench:shard-memory                          # 2 copies (~487k pages), shards of 50k
 *   npm run bench:shard-memory -- --copies 3 --shard-pages 100000
 *
 * Flags: --corpus FILE (/tmp/searchgate-bench/bakeoff/corpus.jsonl, built by bench:index-scale)
 *        --work-dir DIR (/tmp/searchgate-bench/shard-memory) --copies K (2) --shard-pages N (50000)
 *        --cache-mib M (16: LanceDB's index cache; its metadata cache a quarter) --out FILE
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openLocalIndex } from '../src/local/index/index.js';
import { IndexWriter } from '../src/local/index/writer.js';
import { contentHash } from '../src/local/ingest/indexed-page.js';
import { corpusCopy, machineDescription, type CorpusDocument } from './index-bench-common.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { values: flags } = parseArgs({
  options: {
    corpus: { type: 'string', default: '/tmp/searchgate-bench/bakeoff/corpus.jsonl' },
    'work-dir': { type: 'string', default: '/tmp/searchgate-bench/shard-memory' },
    copies: { type: 'string', default: '2' },
    'shard-pages': { type: 'string', default: '50000' },
    'cache-mib': { type: 'string', default: '16' },
    out: { type: 'string', default: resolve(REPO_ROOT, 'bench/results/shard-memory.json') },
    // Internal: one layout's run, in the child process.
    child: { type: 'string' },
  },
});
const WINDOW_PAGES = 50_000;

interface LayoutReport {
  shardPages: number | null;
  seconds: number;
  pagesWritten: number;
  documents: number;
  shards: number;
  foldSeconds: number;
  peakRssMiB: number;
  /** Per 50k pages written: the highest RSS / JavaScript heap / external memory, MiB. */
  windows: { pages: number; rssMiB: number; heapMiB: number; externalMiB: number }[];
}

/** One layout: writes the corpus `copies` times into a fresh index and samples its own memory. */
async function runLayout(directory: string, shardPages: number | null): Promise<LayoutReport> {
  rmSync(directory, { recursive: true, force: true });
  const cacheBytes = Number(flags['cache-mib']) * 1_048_576;
  const index = await openLocalIndex(directory, {
    shardRows: shardPages ?? Number.MAX_SAFE_INTEGER,
    indexCacheBytes: cacheBytes,
    metadataCacheBytes: cacheBytes / 4,
  });
  const writer = await IndexWriter.open(index, {});
  const windows = new Map<number, { rss: number; heap: number; external: number }>();
  let peakRss = 0;
  const mib = (bytes: number) => Math.round(bytes / 1_048_576);
  const sampler = setInterval(() => {
    const memory = process.memoryUsage();
    const window = Math.floor(writer.counters.written / WINDOW_PAGES);
    const seen = windows.get(window) ?? { rss: 0, heap: 0, external: 0 };
    windows.set(window, { rss: Math.max(seen.rss, memory.rss), heap: Math.max(seen.heap, memory.heapUsed), external: Math.max(seen.external, memory.external) });
    peakRss = Math.max(peakRss, memory.rss);
  }, 1000);
  const started = performance.now();
  for (let copy = 1; copy <= Number(flags.copies); copy++) {
    for await (const line of createInterface({ input: createReadStream(flags.corpus!, 'utf8'), crlfDelay: Infinity })) {
      if (!line) continue;
      const document = JSON.parse(line) as CorpusDocument;
      const { url, text } = copy === 1 ? { url: document.url, text: document.body } : corpusCopy({ url: document.url, text: document.body }, copy);
      const parsed = URL.parse(url);
      if (!parsed) continue;
      await writer.ready();
      void writer
        .add({ url, canonicalUrl: url.split('#')[0]!, title: document.title, text, datePublished: null, domain: parsed.hostname, language: 'en', fetchedAt: '2026-11-01T00:00:00.000Z', contentHash: contentHash(text) })
        .catch(() => undefined);
    }
  }
  const counters = await writer.close();
  clearInterval(sampler);
  const stats = await index.stats();
  await index.close();
  return {
    shardPages,
    seconds: Math.round((performance.now() - started) / 1000),
    pagesWritten: counters.written,
    documents: stats.documents,
    shards: stats.shards,
    foldSeconds: Math.round(counters.foldMs / 1000),
    peakRssMiB: mib(peakRss),
    windows: [...windows].sort(([a], [b]) => a - b).map(([window, seen]) => ({ pages: (window + 1) * WINDOW_PAGES, rssMiB: mib(seen.rss), heapMiB: mib(seen.heap), externalMiB: mib(seen.external) })),
  };
}

async function main(): Promise<void> {
  if (flags.child !== undefined) {
    const shardPages = flags.child === 'one-table' ? null : Number(flags.child);
    process.stdout.write(JSON.stringify(await runLayout(join(flags['work-dir']!, flags.child), shardPages)));
    return;
  }
  mkdirSync(flags['work-dir']!, { recursive: true });
  // Both layouts at once, each in its own process (with searchgate's malloc settings): side by side.
  const launcher = resolve(REPO_ROOT, 'bin/searchgate-node');
  const layouts = ['one-table', flags['shard-pages']!];
  const started = new Date().toISOString();
  const loadBefore = os.loadavg();
  const reports = await Promise.all(
    layouts.map(async (layout) => {
      const child = spawn(launcher, [fileURLToPath(import.meta.url), ...process.argv.slice(2), '--child', layout], { stdio: ['ignore', 'pipe', 'inherit'] });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      const [code] = (await once(child, 'exit')) as [number];
      if (code !== 0) throw new Error(`layout ${layout} exited with ${code}`);
      return JSON.parse(output) as LayoutReport;
    }),
  );
  const report = {
    benchmark: 'shard-memory',
    date: started,
    machine: machineDescription(),
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim(),
    copies: Number(flags.copies),
    lanceCacheMiB: { index: Number(flags['cache-mib']), metadata: Number(flags['cache-mib']) / 4 },
    loadAverage: { before: loadBefore, after: os.loadavg() },
    layouts: reports,
  };
  mkdirSync(dirname(flags.out!), { recursive: true });
  writeFileSync(flags.out!, JSON.stringify(report, null, 2) + '\n');
  for (const layout of reports) {
    console.log(`${layout.shardPages === null ? 'one table' : `shards of ${layout.shardPages}`}: ${layout.pagesWritten} pages in ${layout.seconds} s (folds ${layout.foldSeconds} s), ${layout.shards} shard(s), peak RSS ${layout.peakRssMiB} MiB`);
    console.log(`  RSS per 50k pages: ${layout.windows.map((window) => window.rssMiB).join(' ')}`);
  }
  console.log(`wrote ${flags.out}`);
}

await main();
