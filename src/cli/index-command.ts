/**
 * `searchgate index`: fill and inspect the local index from the command line.
 *
 *   add <source…>   crawl URLs and sitemaps, read JSONL and WARC files
 *   stats           how big the index is
 *   remove <url…>   take pages out
 *   export          every page as JSON lines
 */
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { CRAWL_DEFAULTS, crawl, createProgress } from '../local/crawl/index.js';
import type { CrawlSeed } from '../local/crawl/index.js';
import { ExtractorPool } from '../local/extract/index.js';
import { fetchPolicy, normalizeHttpUrl } from '../local/fetch/index.js';
import { openLocalIndex } from '../local/index/index.js';
import { readJsonl, readWarc } from '../local/ingest/index.js';
import type { IngestIssue, IngestOptions } from '../local/ingest/index.js';
import { DEFAULT_INDEX_DIRECTORY } from '../local/shared.js';
import type { IndexedPage, LocalIndex } from '../local/types.js';
import { UsageError, integerOption, isUsageError, usageFailure } from './args.js';

const USAGE = `usage: searchgate index <subcommand> [options]

subcommands:
  add <source…>         add pages to the index. A source is
                          an http(s) URL: crawled (a URL ending in .xml or .xml.gz, or whose file name
                            contains "sitemap", is read as a sitemap and its pages crawled),
                          a .jsonl or .jsonl.gz file: one {url, title?, text? | html?, datePublished?} per line,
                          a .warc or .warc.gz file: its HTML and PDF responses (Common Crawl's format).
                        An interrupted crawl continues where it stopped when run again with the same URLs.
  stats [--json]        documents, domains, size on disk, last update
  remove <url…>         remove pages by URL or canonical URL
  export [--out FILE]   every page as one JSON object per line (standard output by default)

options:
  --dir DIR             the index directory (default: $SEARCHGATE_INDEX_DIR, else ${DEFAULT_INDEX_DIRECTORY})
  --max-pages N         add: pages fetched per crawl, across resumed runs (default ${CRAWL_DEFAULTS.maxPages})
  --max-depth N         add: links followed from a seed URL (default ${CRAWL_DEFAULTS.maxDepth})
  --concurrency N       add: requests at once to one host (default ${CRAWL_DEFAULTS.perHostConcurrency})
  --delay-ms N          add: least time between two requests to one host (default ${CRAWL_DEFAULTS.minDelayMs}; a longer
                        Crawl-delay in robots.txt wins)
  --allow-private       add: let the crawler reach private, loopback and link-local addresses
                        (an intranet; refused by default)`;

/** Pages committed to the index at once: each commit costs an index update, so fewer is faster. */
const WRITE_BATCH_SIZE = 64;
/** A crawl's page waits at most this long for its batch to fill before it is committed anyway. */
const WRITE_BATCH_DELAY_MS = 500;
/** Exit code of a run stopped by SIGINT/SIGTERM, as shells report a signal (128 + SIGINT). */
const EXIT_INTERRUPTED = 130;

export async function main(argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  try {
    switch (subcommand) {
      case 'add':
        return await add(rest);
      case 'stats':
        return await stats(rest);
      case 'remove':
        return await remove(rest);
      case 'export':
        return await exportPages(rest);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        return subcommand === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown subcommand "${subcommand}"`);
    }
  } catch (error) {
    if (isUsageError(error)) return usageFailure('searchgate index', error.message, USAGE);
    process.stderr.write(`searchgate index: ${(error as Error).message ?? error}\n`);
    return 1;
  }
}

const DIRECTORY_OPTION = { dir: { type: 'string' } } as const;

function indexDirectory(dir: string | undefined): string {
  return resolve(dir ?? process.env.SEARCHGATE_INDEX_DIR ?? DEFAULT_INDEX_DIRECTORY);
}

async function withIndex<T>(dir: string | undefined, work: (index: LocalIndex, directory: string) => Promise<T>): Promise<T> {
  const directory = indexDirectory(dir);
  const index = await openLocalIndex(directory);
  try {
    return await work(index, directory);
  } finally {
    await index.close();
  }
}

// ---------------------------------------------------------------------------------------------- add

type Source = { kind: 'crawl'; seed: CrawlSeed } | { kind: 'jsonl' | 'warc'; path: string };

async function add(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...DIRECTORY_OPTION,
      'max-pages': { type: 'string' },
      'max-depth': { type: 'string' },
      concurrency: { type: 'string' },
      'delay-ms': { type: 'string' },
      'allow-private': { type: 'boolean', default: false },
    },
  });
  if (positionals.length === 0) throw new UsageError('add needs at least one source');
  const sources = positionals.map(classifySource);
  const crawlOptions = {
    maxPages: integerOption(values['max-pages'], '--max-pages', 1) ?? CRAWL_DEFAULTS.maxPages,
    maxDepth: integerOption(values['max-depth'], '--max-depth', 0) ?? CRAWL_DEFAULTS.maxDepth,
    perHostConcurrency: integerOption(values.concurrency, '--concurrency', 1) ?? CRAWL_DEFAULTS.perHostConcurrency,
    minDelayMs: integerOption(values['delay-ms'], '--delay-ms', 0) ?? CRAWL_DEFAULTS.minDelayMs,
  };

  const interruption = new AbortController();
  const onSignal = () => {
    // A second Ctrl-C means "now": the default handler ends the process.
    if (interruption.signal.aborted) process.exit(EXIT_INTERRUPTED);
    process.stderr.write('\nstopping: finishing the pages in flight (Ctrl-C again to quit at once)\n');
    interruption.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const extractor = new ExtractorPool();
  try {
    return await withIndex(values.dir, async (index, directory) => {
      const writer = new BatchWriter(index);
      // Exact and near duplicates (the same text under two URLs) are stored once, across all files.
      const seenHashes = new Set<string>();
      let failed = false;
      try {
        const files = sources.filter((source): source is Extract<Source, { kind: 'jsonl' | 'warc' }> => source.kind !== 'crawl');
        for (const file of files) {
          if (interruption.signal.aborted) break;
          failed = !(await ingestFile(file, { writer, extractor, seenHashes, signal: interruption.signal })) || failed;
        }
        const seeds = sources.flatMap((source) => (source.kind === 'crawl' ? [source.seed] : []));
        if (seeds.length > 0 && !interruption.signal.aborted) {
          const summary = await crawl(
            {
              seeds,
              ...crawlOptions,
              fetchPolicy: fetchPolicy({ allowPrivateNetworks: values['allow-private'] }),
              statePath: crawlStatePath(directory, seeds),
              progress: createProgress(process.stderr),
              signal: interruption.signal,
              extractor,
            },
            (page) => writer.add(page),
          );
          // A crawl that stored nothing because nothing could be fetched is a failure to report.
          if (summary.stored === 0 && (summary.errors > 0 || summary.fetched === 0)) failed = true;
        }
      } finally {
        await writer.flush();
      }
      if (interruption.signal.aborted) return EXIT_INTERRUPTED;
      return failed ? 1 : 0;
    });
  } finally {
    await extractor.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function classifySource(source: string): Source {
  if (/^https?:\/\//i.test(source)) {
    const url = normalizeHttpUrl(source);
    if (!url) throw new UsageError(`not a valid URL: ${source}`);
    const fileName = new URL(url).pathname.split('/').pop() ?? '';
    const isSitemap = /\.xml(\.gz)?$/i.test(fileName) || /sitemap/i.test(fileName);
    return { kind: 'crawl', seed: { url, kind: isSitemap ? 'sitemap' : 'page' } };
  }
  const kind = /\.(jsonl|ndjson)(\.gz)?$/i.test(source) ? 'jsonl' : /\.warc(\.gz)?$/i.test(source) ? 'warc' : null;
  if (!kind) throw new UsageError(`cannot tell what ${source} is: expected an http(s) URL, a .jsonl[.gz] or a .warc[.gz] file`);
  if (!existsSync(source) || !statSync(source).isFile()) throw new UsageError(`no such file: ${source}`);
  return { kind, path: source };
}

/** One state file per set of seeds: running `add` again with the same URLs continues that crawl. */
function crawlStatePath(directory: string, seeds: CrawlSeed[]): string {
  const key = createHash('sha256')
    .update(seeds.map((seed) => `${seed.kind} ${seed.url}`).sort().join('\n'))
    .digest('hex')
    .slice(0, 16);
  return join(directory, 'crawl-state', `${key}.jsonl`);
}

/** Reads one JSONL or WARC file into the index; false when the file could not be read at all. */
async function ingestFile(
  file: { kind: 'jsonl' | 'warc'; path: string },
  { writer, extractor, seenHashes, signal }: { writer: BatchWriter; extractor: ExtractorPool; seenHashes: Set<string>; signal: AbortSignal },
): Promise<boolean> {
  let issues = 0;
  let skipped = 0;
  let added = 0;
  let duplicates = 0;
  const options: IngestOptions = {
    extractor,
    onIssue: (issue: IngestIssue) => {
      issues += 1;
      process.stderr.write(`${issue.source}: ${issue.location}: ${issue.message}\n`);
    },
    onSkip: () => {
      skipped += 1;
    },
  };
  const pending: Promise<void>[] = [];
  try {
    for await (const page of file.kind === 'jsonl' ? readJsonl(file.path, options) : readWarc(file.path, options)) {
      if (seenHashes.has(page.contentHash)) {
        duplicates += 1;
      } else {
        seenHashes.add(page.contentHash);
        const written = writer.add(page);
        // Observed by Promise.all below; until then a failed write must not count as unhandled.
        written.catch(() => {});
        pending.push(written);
        added += 1;
      }
      // Bounded memory on a large file: wait for the index to catch up now and then.
      if (pending.length >= WRITE_BATCH_SIZE * 4) await Promise.all(pending.splice(0));
      if (signal.aborted) break;
    }
    await Promise.all(pending);
  } catch (error) {
    await Promise.allSettled(pending);
    process.stderr.write(`${file.path}: ${(error as Error).message}\n`);
    return false;
  }
  process.stderr.write(
    `${file.path}: ${added} pages added, ${duplicates} duplicates, ${skipped} skipped, ${issues} bad ${file.kind === 'jsonl' ? 'lines' : 'records'}\n`,
  );
  return true;
}

/**
 * Gathers pages into batches for the index. A page's promise settles when its batch is committed,
 * so a crawl marks a page done only once it is stored.
 */
class BatchWriter {
  private batch: { page: IndexedPage; resolve(): void; reject(error: unknown): void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly index: LocalIndex) {}

  add(page: IndexedPage): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.batch.push({ page, resolve, reject });
      if (this.batch.length >= WRITE_BATCH_SIZE) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), WRITE_BATCH_DELAY_MS);
    });
  }

  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.batch;
    this.batch = [];
    if (batch.length > 0) {
      this.writing = this.writing.then(() =>
        this.index.upsert(batch.map((entry) => entry.page)).then(
          () => batch.forEach((entry) => entry.resolve()),
          (error: unknown) => batch.forEach((entry) => entry.reject(error)),
        ),
      );
    }
    return this.writing;
  }
}

// -------------------------------------------------------------------------------- stats, remove, export

async function stats(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { ...DIRECTORY_OPTION, json: { type: 'boolean', default: false } } });
  return withIndex(values.dir, async (index, directory) => {
    const stats = await index.stats();
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ directory, ...stats })}\n`);
    } else {
      process.stdout.write(
        [
          `directory:     ${directory}`,
          `documents:     ${stats.documents}`,
          `domains:       ${stats.domains}`,
          `size on disk:  ${formatBytes(stats.bytesOnDisk)}`,
          `last updated:  ${stats.lastUpdated ?? 'never'}`,
        ].join('\n') + '\n',
      );
    }
    return 0;
  });
}

function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

async function remove(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: DIRECTORY_OPTION });
  if (positionals.length === 0) throw new UsageError('remove needs at least one URL');
  // As typed and normalized: the index holds pages under their URL as fetched and their normalized canonical URL.
  const urls = positionals.flatMap((url) => [url, normalizeHttpUrl(url) ?? url]);
  return withIndex(values.dir, async (index) => {
    const removed = await index.remove(urls);
    process.stdout.write(`removed ${removed} page${removed === 1 ? '' : 's'}\n`);
    return 0;
  });
}

async function exportPages(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { ...DIRECTORY_OPTION, out: { type: 'string' } } });
  return withIndex(values.dir, async (index) => {
    // A file is written aside and renamed at the end, so it is never seen half-written.
    const partial = values.out ? `${values.out}.partial` : null;
    const output: Writable = partial ? createWriteStream(partial) : process.stdout;
    let count = 0;
    try {
      for await (const page of index.export()) {
        if (!output.write(`${JSON.stringify(page)}\n`)) await once(output, 'drain');
        count += 1;
      }
      if (partial) {
        output.end();
        await once(output, 'finish');
        renameSync(partial, values.out!);
      }
    } catch (error) {
      if (partial) {
        output.destroy();
        rmSync(partial, { force: true });
      }
      throw error;
    }
    if (values.out) process.stderr.write(`exported ${count} pages to ${values.out}\n`);
    return 0;
  });
}
