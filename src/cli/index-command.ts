/**
 * `searchgate index`: fill and inspect the local index from the command line.
 *
 *   add <source…>   crawl URLs and sitemaps, read JSONL and WARC files
 *   fold            fold unindexed pages into the indexes now
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
import { openPageEmbedder, type LoadedEmbedder } from '../local/index/embedder.js';
import { DigestSet } from '../local/ingest/digest-set.js';
import { DEFAULT_MAX_UNINDEXED_ROWS, DEFAULT_SHARD_ROWS, openLocalIndex, type LocalIndexOptions } from '../local/index/index.js';
import { parseIndexLocation } from '../local/index/location.js';
import { ObjectStore } from '../local/index/object-store.js';
import { claimWriter, WriterRefusedError, type WriterClaim } from '../local/index/writer-lease.js';
import { createWriteProgress, type WriteProgress } from '../local/index/progress.js';
import { IndexWriter, removeOldVersions, WRITER_DEFAULTS } from '../local/index/writer.js';
import { readJsonl, readWarc, withoutMarkdown } from '../local/ingest/index.js';
import type { IngestIssue, IngestOptions, PageExtractor } from '../local/ingest/index.js';
import { ModelDirectoryError } from '../local/rerank/model.js';
import { DEFAULT_INDEX_DIRECTORY, DEFAULT_RERANK_MODEL_DIRECTORY } from '../local/shared.js';
import type { LocalIndex } from '../local/types.js';
import { UsageError, integerOption, isUsageError, usageFailure } from './args.js';

const USAGE = `usage: searchgate index <subcommand> [options]

subcommands:
  add <source…>         add pages to the index. A source is
                          an http(s) URL: crawled (a URL ending in .xml or .xml.gz, or whose file name
                            contains "sitemap", is read as a sitemap and its pages crawled),
                          a .jsonl or .jsonl.gz file: one {url, title?, text? | html?, datePublished?} per line,
                          a .warc or .warc.gz file: its HTML and PDF responses (Common Crawl's format).
                        Pages are embedded with the embedded model and stored with their vectors.
                        Run again with the same sources after an interruption: pages already in,
                        unchanged, are skipped, and an interrupted crawl continues where it stopped.
  fold                  fold the pages that add left unindexed into the indexes now, compact the table and
                        delete old versions (a replica of an index on object storage copies it all again)
  stats [--json]        documents, domains, size on disk, last update
  remove <url…>         remove pages by URL or canonical URL
  export [--out FILE]   every page as one JSON object per line (standard output by default)

options:
  --dir DIR|URI         the index directory, or s3://bucket/prefix on S3-compatible storage (settings from
                        AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ALLOW_HTTP)
                        (default: $SEARCHGATE_INDEX_DIR, else ${DEFAULT_INDEX_DIRECTORY})
  --max-pages N         add: pages fetched per crawl, across resumed runs (default ${CRAWL_DEFAULTS.maxPages})
  --max-depth N         add: links followed from a seed URL (default ${CRAWL_DEFAULTS.maxDepth})
  --concurrency N       add: requests at once to one host (default ${CRAWL_DEFAULTS.perHostConcurrency})
  --delay-ms N          add: least time between two requests to one host (default ${CRAWL_DEFAULTS.minDelayMs}; a longer
                        Crawl-delay in robots.txt wins)
  --allow-private       add: let the crawler reach private, loopback and link-local addresses
                        (an intranet; refused by default)
  --no-vectors          add: store pages without vectors (full-text search alone; faster to build)
  --no-markdown         add: store no markdown beside the text of pages extracted from HTML (about a
                        fifth faster for HTML and WARC sources, and a smaller index; requests for
                        markdown then get those pages' plain text)
  --reembed             add: also embed every page of the index whose vectors are missing or were made
                        by another model (an index built before vectors, or after a model change) or
                        without its title's vector (made before title vectors); no source is needed
  --model DIR           add: the embedding model (default: $SEARCHGATE_RERANK_MODEL, else ${DEFAULT_RERANK_MODEL_DIRECTORY})
  --batch-pages N       add: pages written at once (default ${WRITER_DEFAULTS.batchPages})
  --fold-every N        add: fold appended pages into the indexes every N pages (default ${WRITER_DEFAULTS.foldEveryPages});
                        a crawl's pages are made searchable ${WRITER_DEFAULTS.foldEveryMs / 1000} s after they are written, and
                        every page is searchable when add returns
  --max-unindexed N     add: unindexed pages that searches still find by scanning them (default
                        $SEARCHGATE_MAX_UNINDEXED_ROWS, else ${DEFAULT_MAX_UNINDEXED_ROWS}); add ends with a fold only past
                        this many, so a small add rewrites no existing file. Give gateways the same value
  --fold                add: end with a fold however few pages are unindexed

A directory index keeps its pages in shards of $SEARCHGATE_SHARD_PAGES (default ${DEFAULT_SHARD_ROWS}) pages: a fold
rewrites only the newest shard, so its time and memory stop growing with the index.`;

/** Exit code of a run stopped by SIGINT/SIGTERM, as shells report a signal (128 + SIGINT). */
const EXIT_INTERRUPTED = 130;

export async function main(argv: string[]): Promise<number> {
  const [subcommand, ...rest] = argv;
  try {
    switch (subcommand) {
      case 'add':
        return await add(rest);
      case 'fold':
        return await fold(rest);
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

/** --max-unindexed, where given; the index reads the environment's value otherwise. */
function unindexedRowsOption(value: string | undefined): Pick<LocalIndexOptions, 'maxUnindexedRows'> {
  const maxUnindexedRows = integerOption(value, '--max-unindexed', 0);
  return maxUnindexedRows === undefined ? {} : { maxUnindexedRows };
}

/** Off a terminal, a progress line every 30 s, or as often as SEARCHGATE_PROGRESS_INTERVAL_MS says (a benchmark samples each second). */
function progressIntervalMs(): number | undefined {
  const value = Number(process.env.SEARCHGATE_PROGRESS_INTERVAL_MS);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** A directory, resolved, or an s3:// URI as given (location.ts). */
function indexLocation(dir: string | undefined): string {
  const given = dir ?? process.env.SEARCHGATE_INDEX_DIR ?? DEFAULT_INDEX_DIRECTORY;
  const location = parseIndexLocation(given);
  return location.kind === 'directory' ? resolve(location.path) : location.uri;
}

/**
 * Opens the index for one command. A command that writes to an index on object storage is its
 * writer: it first makes sure it is the only one where the store could not tell two apart
 * (writer-lease.ts).
 */
async function withIndex<T>(
  dir: string | undefined,
  access: 'read' | 'write',
  work: (index: LocalIndex, directory: string) => Promise<T>,
  options: LocalIndexOptions = {},
): Promise<T> {
  const directory = indexLocation(dir);
  const location = parseIndexLocation(directory);
  let claim: WriterClaim | null = null;
  let store: ObjectStore | null = null;
  if (location.kind === 'object-store' && access === 'write') {
    store = new ObjectStore(location.bucket, location.prefix, STORE_TIMEOUT_MS);
    try {
      claim = await claimWriter(store, location.uri);
    } catch (error) {
      store.close();
      if (error instanceof WriterRefusedError) throw new UsageError(error.message);
      throw error;
    }
  }
  try {
    // Reading an index on a store must not write to it: no index creation, no resumed fold.
    const index = await openLocalIndex(directory, { ...options, readOnly: location.kind === 'object-store' && access === 'read' });
    try {
      return await work(index, directory);
    } finally {
      await index.close();
    }
  } finally {
    await claim?.release();
    store?.close();
  }
}

const STORE_TIMEOUT_MS = 30_000;

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
      'no-vectors': { type: 'boolean', default: false },
      'no-markdown': { type: 'boolean', default: false },
      reembed: { type: 'boolean', default: false },
      model: { type: 'string' },
      'batch-pages': { type: 'string' },
      'fold-every': { type: 'string' },
      'max-unindexed': { type: 'string' },
      fold: { type: 'boolean', default: false },
    },
  });
  if (positionals.length === 0 && !values.reembed) throw new UsageError('add needs at least one source (or --reembed)');
  if (values.reembed && values['no-vectors']) throw new UsageError('--reembed and --no-vectors contradict each other');
  const sources = positionals.map(classifySource);
  const crawlOptions = {
    maxPages: integerOption(values['max-pages'], '--max-pages', 1) ?? CRAWL_DEFAULTS.maxPages,
    maxDepth: integerOption(values['max-depth'], '--max-depth', 0) ?? CRAWL_DEFAULTS.maxDepth,
    perHostConcurrency: integerOption(values.concurrency, '--concurrency', 1) ?? CRAWL_DEFAULTS.perHostConcurrency,
    minDelayMs: integerOption(values['delay-ms'], '--delay-ms', 0) ?? CRAWL_DEFAULTS.minDelayMs,
  };
  const writerOptions = {
    batchPages: integerOption(values['batch-pages'], '--batch-pages', 1) ?? WRITER_DEFAULTS.batchPages,
    foldEveryPages: integerOption(values['fold-every'], '--fold-every', 1) ?? WRITER_DEFAULTS.foldEveryPages,
    foldAtClose: values.fold,
  };
  const indexOptions = unindexedRowsOption(values['max-unindexed']);

  const interruption = new AbortController();
  const onSignal = () => {
    // A second Ctrl-C means "now": the default handler ends the process.
    if (interruption.signal.aborted) process.exit(EXIT_INTERRUPTED);
    process.stderr.write('\nstopping: writing the pages in flight and making them searchable, so that the index stays whole (Ctrl-C again to quit at once)\n');
    interruption.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const pool = new ExtractorPool();
  const extractor = values['no-markdown'] ? withoutMarkdown(pool) : pool;
  const embedding = values['no-vectors'] ? null : await loadEmbedder(values.model, values.reembed);
  const progress = createWriteProgress(process.stderr, { intervalMs: progressIntervalMs() });
  try {
    return await withIndex(values.dir, 'write', async (index, directory) => {
      const writer = await IndexWriter.open(index, {
        ...writerOptions,
        embedder: embedding?.embedder ?? null,
        signal: interruption.signal,
        onProgress: (counters) => progress.update(counters),
      });
      // Exact and near duplicates (the same text under two URLs) are stored once, across all files.
      const seenHashes = new DigestSet();
      let failed = false;
      try {
        const files = sources.filter((source): source is Extract<Source, { kind: 'jsonl' | 'warc' }> => source.kind !== 'crawl');
        for (const file of files) {
          if (interruption.signal.aborted) break;
          failed = !(await ingestFile(file, { writer, extractor, seenHashes, progress, signal: interruption.signal })) || failed;
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
        if (values.reembed && !interruption.signal.aborted) await reembed(index, writer, interruption.signal);
      } finally {
        // Whatever happened, what was written is made searchable: the index is whole.
        const counters = await writer.close();
        progress.finish(counters, !interruption.signal.aborted);
      }
      if (interruption.signal.aborted) return EXIT_INTERRUPTED;
      return failed ? 1 : 0;
    }, indexOptions);
  } finally {
    await Promise.allSettled([pool.close(), embedding?.close()]);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * The embedding model, or null (full text alone) when it cannot be loaded and was not asked for by
 * name: a missing default model should not stop an ingest, only be said.
 */
async function loadEmbedder(model: string | undefined, required: boolean): Promise<LoadedEmbedder | null> {
  const named = model ?? process.env.SEARCHGATE_RERANK_MODEL;
  try {
    return await openPageEmbedder(named ?? DEFAULT_RERANK_MODEL_DIRECTORY);
  } catch (error) {
    if (named !== undefined || required || !(error instanceof ModelDirectoryError)) throw error;
    process.stderr.write(
      `searchgate index: storing pages without vectors (full-text search alone): ${error.message}\n` +
        '  fetch the model with `npm run fetch-model`, then run `searchgate index add --reembed` to add them\n',
    );
    return null;
  }
}

/** Every page of the index through the writer, which writes again those whose vectors are missing or stale. */
async function reembed(index: LocalIndex, writer: IndexWriter, signal: AbortSignal): Promise<void> {
  for await (const page of index.export()) {
    if (signal.aborted) break;
    await writer.ready();
    void writer.add(page).catch(() => {});
  }
  await writer.flush();
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
  const location = parseIndexLocation(directory);
  // The state of a crawl into a store stays on the writer's disk: it is the writer's, not the replicas'.
  const states = location.kind === 'directory' ? join(directory, 'crawl-state') : resolve('data', 'crawl-state', location.bucket, ...location.prefix.split('/').filter(Boolean));
  return join(states, `${key}.jsonl`);
}

/** Reads one JSONL or WARC file into the index; false when the file could not be read at all. */
async function ingestFile(
  file: { kind: 'jsonl' | 'warc'; path: string },
  {
    writer,
    extractor,
    seenHashes,
    progress,
    signal,
  }: { writer: IndexWriter; extractor: PageExtractor; seenHashes: DigestSet; progress: WriteProgress; signal: AbortSignal },
): Promise<boolean> {
  let issues = 0;
  let skipped = 0;
  let added = 0;
  let duplicates = 0;
  const size = statSync(file.path).size;
  const options: IngestOptions = {
    extractor,
    onIssue: (issue: IngestIssue) => {
      issues += 1;
      progress.notice(`${issue.source}: ${issue.location}: ${issue.message}`);
    },
    onSkip: () => {
      skipped += 1;
    },
    onBytesRead: (bytes) => progress.update(writer.counters, size > 0 ? bytes / size : null),
  };
  const pending = new Set<Promise<void>>();
  try {
    for await (const page of file.kind === 'jsonl' ? readJsonl(file.path, options) : readWarc(file.path, options)) {
      if (!seenHashes.add(page.contentHash)) {
        duplicates += 1;
      } else {
        // Bounded memory on a large file: the reader waits while the writer has enough in flight.
        await writer.ready();
        const written = writer.add(page);
        pending.add(written);
        // Settled pages leave the set at once; a failure is reported by the await below.
        written.then(() => pending.delete(written), () => {});
        added += 1;
      }
      if (signal.aborted) break;
    }
    await writer.flush();
    await Promise.all(pending);
  } catch (error) {
    await Promise.allSettled(pending);
    progress.notice(`${file.path}: ${(error as Error).message}`);
    return false;
  }
  progress.notice(
    `${file.path}: ${added} pages read, ${duplicates} duplicates, ${skipped} skipped, ${issues} bad ${file.kind === 'jsonl' ? 'lines' : 'records'}`,
  );
  return true;
}

// ---------------------------------------------------------------------------------------------- fold

async function fold(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: DIRECTORY_OPTION });
  return withIndex(values.dir, 'write', async (index) => {
    const unindexed = await index.unindexedRows();
    const started = performance.now();
    await index.fold({ keepVersionsMs: WRITER_DEFAULTS.keepVersionsMs });
    await removeOldVersions(index, WRITER_DEFAULTS.keepVersionsMs);
    process.stdout.write(`folded ${unindexed} unindexed page${unindexed === 1 ? '' : 's'} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    return 0;
  });
}

// -------------------------------------------------------------------------------- stats, remove, export

async function stats(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { ...DIRECTORY_OPTION, json: { type: 'boolean', default: false } } });
  return withIndex(values.dir, 'read', async (index, directory) => {
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
          `shards:        ${stats.shards}`,
          `last updated:  ${stats.lastUpdated ?? 'never'}`,
          `vectors:       ${vectorSummary(stats.vectors, stats.documents)}`,
        ].join('\n') + '\n',
      );
    }
    return 0;
  });
}

/** "5183 of 5183 pages (all-minilm-l6-v2 …)", or why there are none. */
function vectorSummary(vectors: Record<string, number>, documents: number): string {
  const entries = Object.entries(vectors);
  if (entries.length === 0) return documents === 0 ? 'none yet' : 'none: full-text search alone (add them with `searchgate index add --reembed`)';
  return entries.map(([model, count]) => `${count} of ${documents} pages (${model})`).join('; ');
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
  return withIndex(values.dir, 'write', async (index) => {
    const removed = await index.remove(urls);
    process.stdout.write(`removed ${removed} page${removed === 1 ? '' : 's'}\n`);
    return 0;
  });
}

async function exportPages(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { ...DIRECTORY_OPTION, out: { type: 'string' } } });
  return withIndex(values.dir, 'read', async (index) => {
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
