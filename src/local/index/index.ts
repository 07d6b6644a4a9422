/**
 * The embedded default's on-disk full-text index, on LanceDB (see docs/benchmarks.md, "Local index" for the
 * measurements behind the choice).
 *
 * - Ranking: BM25 per field (title, text), summed with a title weight: a multi-match query.
 * - Filters: SQL predicates on scalar-indexed columns, applied as a pre-filter inside the search.
 * - Durability: every write is one LanceDB commit (a new manifest written atomically), so a crash
 *   leaves the last committed version readable; files of an unfinished commit are never referenced.
 * - Shards: the pages are kept in tables of at most `shardRows` each (shards.ts, table.ts), and
 *   writes go to the newest, so that a fold costs one shard's time and memory, not the index's.
 * - Writes: pages are appended as new rows (cheap, whatever the index's size). A fold merges them
 *   into the indexes, but LanceDB's fold also compacts, rewriting the whole shard (every byte of it
 *   copied again by each replica of an index on object storage). So a small write is not folded:
 *   searches find up to `maxUnindexedRows` unindexed rows by LanceDB's flat scan (30-50 µs per row
 *   per full-text query), and past that many they read indexed rows only, until a fold. The rows a
 *   write supersedes are deleted once the new ones are searchable (by the scan, or after the fold),
 *   so an updated page never vanishes meanwhile. Writers go through an IndexWriter (writer.ts),
 *   which folds once per many thousand rows of a run, or at its end once the unindexed rows are past
 *   the limit; upsert() folds at once, for tests and one-off writes.
 * - Vectors: each page may carry the vectors of its windows (issue 17). The first window's vector is
 *   the `vector` column, served by an IVF-PQ index once the table is large enough to need one; the
 *   others are kept beside it for scoring a page by its best window. An index built before vectors
 *   has none of these columns and is searched by BM25 alone.
 * - Several processes: the gateway reads while a CLI writes; readers look for a newer version at
 *   most `readConsistencyMs` apart; concurrent writers are serialised by LanceDB's optimistic commits,
 *   which we retry on conflict.
 */
import { mkdir } from 'node:fs/promises';
import * as lancedb from '@lancedb/lancedb';
import type { LocalIndex } from '../types.js';
import { parseIndexLocation } from './location.js';
import { ShardedIndex } from './shards.js';
import { DEFAULT_SNIPPET_LENGTH } from './snippet.js';

export { ReadOnlyIndexError } from './table.js';

export interface LocalIndexOptions {
  /**
   * How stale a search may be with respect to writes made by another process. 0 checks for a new
   * version on every search. This instance's own writes are searchable when their upsert resolves.
   */
  readConsistencyMs?: number;
  /** Weight of the title field's BM25 against the text's (1). */
  titleBoost?: number;
  /** Snippet length cap in code points. */
  snippetLength?: number;
  /**
   * Superseded versions are deleted this long after they stop being current, so that a reader in
   * another process still on an older version never loses a file under it.
   */
  keepVersionsMs?: number;
  /**
   * LanceDB's caches of index data and file metadata, in bytes. Its own defaults (6 GiB and 1 GiB)
   * let a long ingest or a busy gateway grow without end; these bound the index's share of memory.
   */
  indexCacheBytes?: number;
  metadataCacheBytes?: number;
  /**
   * Unindexed rows (appended since the last fold) that searches still find, by a flat scan whose
   * cost grows with them (docs/benchmarks.md, "Small commits without a fold"); past this many,
   * searches skip them until the next fold. A writer ending its run folds once they are past it,
   * counting each commit's fragment of them as UNINDEXED_FRAGMENT_ROWS more rows (the scan pays per
   * fragment too). The writer and the gateways reading its index should agree on it:
   * SEARCHGATE_MAX_UNINDEXED_ROWS sets both.
   */
  maxUnindexedRows?: number;
  /**
   * Opens the index for searching only: nothing is created, indexed or folded on open, and every
   * write throws. A replica's mirror of an index on object storage is opened so (mirror.ts).
   */
  readOnly?: boolean;
  /**
   * Pages per shard (shards.ts): past this many, writes go to a new table, so that a fold's time and
   * memory stop growing with the index. SEARCHGATE_SHARD_PAGES sets it; an index on object storage
   * is always one table.
   */
  shardRows?: number;
}

/** See LocalIndexOptions: what a query needs of the index data stays warm, and memory stays bounded. */
export const DEFAULT_INDEX_CACHE_BYTES = 256 * 1_048_576;
export const DEFAULT_METADATA_CACHE_BYTES = 64 * 1_048_576;

/**
 * SciFact train nDCG@10 by title weight: 1.0 → 0.683, 1.2 → 0.684, 1.5 → 0.667, 2.0 → 0.612. Each
 * field has its own BM25 and a short title's length normalisation already lifts its matches, so a
 * small extra weight keeps the title ahead without drowning the text.
 */
const DEFAULT_TITLE_BOOST = 1.2;
const DEFAULT_READ_CONSISTENCY_MS = 1000;
const DEFAULT_KEEP_VERSIONS_MS = 10 * 60_000;
/**
 * Each unindexed row adds 30-50 µs to a full-text query (its flat scan: on a 50k-page index, 500
 * rows added 14 ms to its p50, 1,000 rows 32 ms), while a fold rewrites the whole table, which every
 * replica then copies again. 500 bounds the first at about 15-20 ms and makes the second at most one
 * per 500 new pages: docs/benchmarks.md, "Small commits without a fold".
 */
export const DEFAULT_MAX_UNINDEXED_ROWS = 500;
/** The limit an index is opened with when the caller names none: the environment's, else the default. */
export function maxUnindexedRowsSetting(environment: NodeJS.ProcessEnv = process.env): number {
  return wholeNumberSetting(environment, 'SEARCHGATE_MAX_UNINDEXED_ROWS', DEFAULT_MAX_UNINDEXED_ROWS, 0);
}

function wholeNumberSetting(environment: NodeJS.ProcessEnv, name: string, fallback: number, least: number): number {
  const given = environment[name];
  if (given === undefined || given === '') return fallback;
  const value = Number(given);
  if (!Number.isInteger(value) || value < least) throw new Error(`${name} must be a whole number ≥ ${least}, not "${given}"`);
  return value;
}
/**
 * The fold of a 243k-page shard with vectors peaked at 1.1 GiB, growing about 1.7 MiB per 1,000 rows
 * (docs/benchmarks.md, "Index at scale"): 250,000 keeps it near that whatever the index's size, and
 * leaves the bench corpus in one shard, its BM25 statistics whole.
 */
export const DEFAULT_SHARD_ROWS = 250_000;

/** The shard size an index is opened with when the caller names none: the environment's, else the default. */
export function shardRowsSetting(environment: NodeJS.ProcessEnv = process.env): number {
  return wholeNumberSetting(environment, 'SEARCHGATE_SHARD_PAGES', DEFAULT_SHARD_ROWS, 1);
}

/**
 * Lance reads a scan ahead into a buffer of 2 GiB by default, sized for 256 reads in flight from an
 * object store; a local disk fills it. The compaction inside each fold scans the whole table, so the
 * fold read the table ahead and its memory grew with it, about 2.4 KiB a page of 3 KB of text
 * (docs/benchmarks.md, "The fold's read-ahead"). 64 MiB is eight of Lance's 8 MiB pages in flight.
 * An operator's own LANCE_DEFAULT_IO_BUFFER_SIZE is kept. Lance reads it once, at its first scan.
 */
export const LANCE_IO_BUFFER_BYTES = 64 * 1_048_576;

/** `directory` may also be an `s3://bucket/prefix` URI (location.ts): LanceDB then reads and writes the store. */
export async function openLocalIndex(directory: string, options: LocalIndexOptions = {}): Promise<LocalIndex> {
  process.env.LANCE_DEFAULT_IO_BUFFER_SIZE ??= String(LANCE_IO_BUFFER_BYTES);
  const location = parseIndexLocation(directory);
  if (location.kind === 'directory' && !options.readOnly) await mkdir(directory, { recursive: true });
  const readConsistencyMs = options.readConsistencyMs ?? DEFAULT_READ_CONSISTENCY_MS;
  const session = new lancedb.Session(
    BigInt(options.indexCacheBytes ?? DEFAULT_INDEX_CACHE_BYTES),
    BigInt(options.metadataCacheBytes ?? DEFAULT_METADATA_CACHE_BYTES),
  );
  const connection = await lancedb.connect(directory, { readConsistencyInterval: readConsistencyMs / 1000, session });
  return ShardedIndex.open(location, connection, location.kind === 'directory' ? directory : location.uri, {
    titleBoost: options.titleBoost ?? DEFAULT_TITLE_BOOST,
    snippetLength: options.snippetLength ?? DEFAULT_SNIPPET_LENGTH,
    keepVersionsMs: options.keepVersionsMs ?? DEFAULT_KEEP_VERSIONS_MS,
    maxUnindexedRows: options.maxUnindexedRows ?? maxUnindexedRowsSetting(),
    readOnly: options.readOnly ?? false,
    // A replica's mirror copies one table (mirror.ts), so an index on object storage stays one.
    shardRows: location.kind === 'object-store' ? Number.POSITIVE_INFINITY : (options.shardRows ?? shardRowsSetting()),
    readConsistencyMs,
  });
}
