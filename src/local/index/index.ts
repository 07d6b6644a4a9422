/**
 * The embedded default's on-disk full-text index, on LanceDB (see docs/benchmarks.md, "Local index" for the
 * measurements behind the choice).
 *
 * - Ranking: BM25 per field (title, text), summed with a title weight: a multi-match query.
 * - Filters: SQL predicates on scalar-indexed columns, applied as a pre-filter inside the search.
 * - Durability: every write is one LanceDB commit (a new manifest written atomically), so a crash
 *   leaves the last committed version readable; files of an unfinished commit are never referenced.
 * - Writes: pages are appended as new rows (cheap, whatever the index's size). A fold merges them
 *   into the indexes, but LanceDB's fold also compacts, rewriting the whole table (every byte of it
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
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import type { EmbeddedPage, IndexedPage, IndexHit, IndexQuery, IndexStats, LocalIndex, StoredPageState } from '../types.js';
import { filterPredicate, sqlString, sqlStringList } from './filters.js';
import {
  MARKDOWN_COLUMN,
  PAGE_FIELDS,
  PAGES_TABLE,
  hasColumn,
  markdownField,
  titleVectorField,
  SCHEMA_VERSION,
  SCHEMA_VERSION_KEY,
  TITLE_VECTOR_COLUMN,
  VECTOR_COLUMN,
  VECTOR_COLUMNS,
  VECTOR_MODEL_COLUMN,
  pageSchema,
  pagesFromArrow,
  toRow,
  vectorDimensionsOf,
  lanceArrow,
  vectorFields,
  vectorsFromArrow,
  type ColumnarResult,
} from './schema.js';
import { parseIndexLocation, type IndexLocation } from './location.js';
import { ObjectStore } from './object-store.js';
import { buildSnippet, DEFAULT_SNIPPET_LENGTH } from './snippet.js';
import { queryStems, StemMatcher } from './terms.js';

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
/**
 * What a fragment of unindexed rows costs a search, in rows: 500 one-row commits cost the hybrid
 * search about 170 ms, one commit of 500 rows about 14 ms (docs/benchmarks.md, "Small commits
 * without a fold"). So a trickle of one-page commits folds after about 45 of them.
 */
const UNINDEXED_FRAGMENT_ROWS = 10;
/** LanceDB's compaction target: a folded table holds about one fragment per this many rows. */
const COMPACTED_FRAGMENT_ROWS = 1_048_576;

/** The limit an index is opened with when the caller names none: the environment's, else the default. */
export function maxUnindexedRowsSetting(environment: NodeJS.ProcessEnv = process.env): number {
  const given = environment.SEARCHGATE_MAX_UNINDEXED_ROWS;
  if (given === undefined || given === '') return DEFAULT_MAX_UNINDEXED_ROWS;
  const value = Number(given);
  if (!Number.isInteger(value) || value < 0) throw new Error(`SEARCHGATE_MAX_UNINDEXED_ROWS must be a whole number ≥ 0, not "${given}"`);
  return value;
}
const MAX_COMMIT_ATTEMPTS = 8;

/** The index tokenizer: English words, folded, stemmed, stop words out (as SciFact's BM25 baseline). */
const FULL_TEXT_OPTIONS: Partial<lancedb.FtsOptions> = {
  baseTokenizer: 'simple',
  language: 'English',
  lowercase: true,
  asciiFolding: true,
  stem: true,
  removeStopWords: true,
  maxTokenLength: 40,
  // No phrase queries are asked for; positions would double the index and its build time.
  withPosition: false,
};
const FULL_TEXT_COLUMNS = ['title', 'text'] as const;
const SCALAR_INDEXES: [string, () => lancedb.Index][] = [
  ['canonicalUrl', lancedb.Index.btree],
  ['url', lancedb.Index.btree],
  ['publishedAtMs', lancedb.Index.btree],
  ['filterLabels', lancedb.Index.labelList],
];
const SEARCH_COLUMNS = [...PAGE_FIELDS, '_score'];
const GET_COLUMNS = [...PAGE_FIELDS, 'revision'];
/**
 * Below this many vectors a search scans them all (a few milliseconds); from here on an IVF-PQ index
 * answers, built at the fold that first finds this many.
 */
const VECTOR_INDEX_MIN_ROWS = 10_000;
/** Partitions probed per vector search, and the multiple of the limit re-scored with exact distances. */
const VECTOR_NPROBES = 20;
const VECTOR_REFINE_FACTOR = 4;

let lastRevision = 0;
/** Epoch microseconds, increasing within the process; across processes the clock orders writes. */
function nextRevision(): number {
  lastRevision = Math.max(Date.now() * 1000, lastRevision + 1);
  return lastRevision;
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
  const table = await openPagesTable(connection, location.kind === 'directory' ? directory : location.uri, options.readOnly ?? false);
  if (!options.readOnly) {
    await ensureIndexes(table);
    await ensureMarkdownColumn(table);
  }
  const schema = await table.schema();
  const index = new LanceLocalIndex(location, connection, table, vectorDimensionsOf(schema), hasColumn(schema, TITLE_VECTOR_COLUMN), hasColumn(schema, MARKDOWN_COLUMN), {
    titleBoost: options.titleBoost ?? DEFAULT_TITLE_BOOST,
    snippetLength: options.snippetLength ?? DEFAULT_SNIPPET_LENGTH,
    keepVersionsMs: options.keepVersionsMs ?? DEFAULT_KEEP_VERSIONS_MS,
    maxUnindexedRows: options.maxUnindexedRows ?? maxUnindexedRowsSetting(),
    readOnly: options.readOnly ?? false,
  });
  if (!options.readOnly) await index.resumeInterruptedFold();
  return index;
}

async function openPagesTable(connection: lancedb.Connection, directory: string, readOnly: boolean): Promise<lancedb.Table> {
  // An existing table is opened as it is (creating over it would only fail on a layout change).
  const exists = (await connection.tableNames()).includes(PAGES_TABLE);
  if (!exists && readOnly) throw new Error(`local index: ${directory} holds no index`);
  const table = exists
    ? await connection.openTable(PAGES_TABLE)
    : await connection.createEmptyTable(PAGES_TABLE, pageSchema(null), { mode: 'create', existOk: true });
  const found = (await table.schema()).metadata.get(SCHEMA_VERSION_KEY);
  if (found !== SCHEMA_VERSION) {
    table.close();
    throw new Error(
      `local index: ${directory} holds pages in layout ${found ?? 'unknown'}, this version reads layout ` +
        `${SCHEMA_VERSION}; export it with the version that wrote it, or delete the directory and re-ingest`,
    );
  }
  return table;
}

/** Creates what a new directory lacks; another process creating the same index at once is fine. */
async function ensureIndexes(table: lancedb.Table): Promise<void> {
  const wanted: [string, lancedb.Index][] = [
    ...FULL_TEXT_COLUMNS.map((column): [string, lancedb.Index] => [column, lancedb.Index.fts(FULL_TEXT_OPTIONS)]),
    ...SCALAR_INDEXES.map(([column, index]): [string, lancedb.Index] => [column, index()]),
  ];
  for (const [column, config] of wanted) {
    const hasIndex = async () => (await table.listIndices()).some((index) => index.columns.includes(column));
    if (await hasIndex()) continue;
    try {
      await withCommitRetries(() => table.createIndex(column, { config }));
    } catch (error) {
      if (!(await hasIndex())) throw error;
    }
  }
}

/** Gives an index made before the markdown column that column (null in its rows): a change of metadata only. */
async function ensureMarkdownColumn(table: lancedb.Table): Promise<void> {
  if (hasColumn(await table.schema(), MARKDOWN_COLUMN)) return;
  try {
    await withCommitRetries(() => table.addColumns([markdownField()]));
  } catch (error) {
    // Another writer opening the same index added it first.
    if (!hasColumn(await table.schema(), MARKDOWN_COLUMN)) throw error;
  }
}

function isCommitConflict(error: unknown): boolean {
  return error instanceof Error && /commit conflict|conflicting|preempted|retry/i.test(error.message);
}

/** LanceDB commits optimistically: a writer that lost the race to another process tries again. */
async function withCommitRetries<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= MAX_COMMIT_ATTEMPTS || !isCommitConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * (1 + Math.random())));
    }
  }
}

/** Runs tasks one at a time in call order: this process's writes never race each other. */
class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }

  drain(): Promise<unknown> {
    return this.tail;
  }
}

interface Settings {
  titleBoost: number;
  snippetLength: number;
  keepVersionsMs: number;
  maxUnindexedRows: number;
  readOnly: boolean;
}

/** Distinct domains of one table version: stats() scans the domain column once per version. */
interface DomainCount {
  version: number;
  domains: number;
}

/** How often a search that finds no usable vectors looks at the table's schema again. */
const SCHEMA_RECHECK_MS = 5_000;

/**
 * A column added to the layout after tables were made (markdown, the title vector): an older table
 * gains it when a writer opens it, maybe in another process, so while it is missing it is looked
 * for again, at most once per SCHEMA_RECHECK_MS.
 */
class LaterColumn {
  private checkedAt = performance.now();

  constructor(
    private readonly table: lancedb.Table,
    private readonly name: string,
    /** Whether the table had it when last looked at. */
    public known: boolean,
  ) {}

  async present(): Promise<boolean> {
    if (!this.known && performance.now() - this.checkedAt >= SCHEMA_RECHECK_MS) {
      this.checkedAt = performance.now();
      this.known = hasColumn(await this.table.schema(), this.name);
    }
    return this.known;
  }

  /** This process added it. */
  added(): void {
    this.known = true;
  }
}

class LanceLocalIndex implements LocalIndex {
  private schemaCheckedAt = performance.now();
  /** Columns added after the table was made, which reads select once the table has them. */
  private readonly markdown: LaterColumn;
  private readonly titleVectors: LaterColumn;
  /** This process's commits and folds, one at a time: they would only conflict with each other. */
  private readonly writes = new SerialQueue();
  /** The fold that the writes committed so far will be part of, until it starts. */
  private pendingFold: Promise<void> | null = null;
  /**
   * Rows appended but not yet folded whose page had an older, folded row: those older rows are
   * deleted right after the fold that makes the new ones searchable, so the page never vanishes.
   * canonicalUrl and url → the revision written.
   */
  private superseded = new Map<string, number>();
  /**
   * The same for older rows that were themselves appended since the last fold: not searchable yet,
   * so they are deleted before the fold, and its compaction drops them for free instead of a later
   * one rewriting the table for them (a file whose pages repeat under #fragments supersedes its own rows).
   */
  private supersededUnfolded = new Map<string, number>();
  /** Canonical URLs this instance appended since its last fold. */
  private appendedUnfolded = new Set<string>();
  private domainCount: DomainCount | null = null;
  private hasVectorIndex: boolean | null = null;
  private closed = false;

  constructor(
    private readonly location: IndexLocation,
    private readonly connection: lancedb.Connection,
    private readonly table: lancedb.Table,
    private dimensions: number | null,
    hasTitleVectors: boolean,
    hasMarkdown: boolean,
    private readonly settings: Settings,
  ) {
    this.markdown = new LaterColumn(table, MARKDOWN_COLUMN, hasMarkdown);
    this.titleVectors = new LaterColumn(table, TITLE_VECTOR_COLUMN, hasTitleVectors);
  }

  get vectorDimensions(): number | null {
    return this.dimensions;
  }

  /** The vector columns a search selects: the title vector's too once the table has it. */
  private async vectorColumns(): Promise<string[]> {
    return (await this.titleVectors.present()) ? [...VECTOR_COLUMNS, TITLE_VECTOR_COLUMN] : [...VECTOR_COLUMNS];
  }

  /**
   * Reads the width of the vector columns from the table again, at most once per
   * SCHEMA_RECHECK_MS: another process (`searchgate index add`) may have added vectors, or changed
   * their model, since this one opened the index.
   */
  async refreshVectorDimensions(): Promise<number | null> {
    this.assertOpen();
    if (performance.now() - this.schemaCheckedAt >= SCHEMA_RECHECK_MS) {
      this.schemaCheckedAt = performance.now();
      this.dimensions = vectorDimensionsOf(await this.table.schema());
    }
    return this.dimensions;
  }

  /**
   * Gives an index built before vectors (or with vectors of another width, after a model change)
   * vector columns of this width; existing rows have none until they are written again.
   */
  async ensureVectorColumns(dimensions: number): Promise<void> {
    this.assertWritable();
    if (this.dimensions === dimensions && this.titleVectors.known) return;
    await this.writes.run(async () => {
      const schema = await this.table.schema();
      if (this.dimensions === dimensions) {
        // Vector columns made before the title's: it is added beside them, the window vectors kept.
        if (!hasColumn(schema, TITLE_VECTOR_COLUMN)) await withCommitRetries(() => this.table.addColumns([titleVectorField(dimensions, lanceArrow)]));
      } else {
        if (this.dimensions !== null) {
          const columns = hasColumn(schema, TITLE_VECTOR_COLUMN) ? [...VECTOR_COLUMNS, TITLE_VECTOR_COLUMN] : [...VECTOR_COLUMNS];
          await withCommitRetries(() => this.table.dropColumns(columns));
        }
        await withCommitRetries(() => this.table.addColumns(vectorFields(dimensions, lanceArrow)));
        this.dimensions = dimensions;
        this.hasVectorIndex = null;
      }
      this.titleVectors.added();
    });
  }

  async upsert(pages: Array<IndexedPage | EmbeddedPage>): Promise<void> {
    await this.append(pages);
    await this.fold();
  }

  async append(pages: ReadonlyArray<IndexedPage | EmbeddedPage>, replacing?: ReadonlySet<string>): Promise<void> {
    this.assertWritable();
    // The first vectors an index gets give it its vector columns. Vectors of another width than the
    // index's (another model's) are not stored: the page goes in with its text alone, and the
    // index's own vectors stay until `index add --reembed` changes model.
    const width = pages.map((page) => ('vectors' in page ? page.vectors?.windows[0]?.length : undefined)).find((found) => found !== undefined);
    if (width !== undefined && this.dimensions === null) await this.ensureVectorColumns(width);
    if (width !== undefined && width !== this.dimensions) {
      pages = pages.map((page) => ('vectors' in page && page.vectors && page.vectors.windows[0]?.length !== this.dimensions ? { ...page, vectors: null } : page));
    }
    const revision = nextRevision();
    const columns = { vectors: this.dimensions !== null, titleVector: this.titleVectors.known };
    const rows = [...new Map(pages.map((page) => [page.canonicalUrl, toRow(page, revision, columns)])).values()];
    if (rows.length === 0) return;
    const batch = lancedb.makeArrowTable(rows as unknown as Record<string, unknown>[], { schema: await this.table.schema() });
    await this.writes.run(() => withCommitRetries(() => this.table.add(batch)));
    for (const row of rows) {
      // A delete costs a commit and deletion files even when it finds nothing: only for pages known to replace rows.
      if (!replacing || replacing.has(row.canonicalUrl)) {
        const deletions = this.appendedUnfolded.has(row.canonicalUrl) ? this.supersededUnfolded : this.superseded;
        deletions.set(row.canonicalUrl, revision);
        deletions.set(row.url, revision);
      }
      this.appendedUnfolded.add(row.canonicalUrl);
    }
  }

  /**
   * Deletes the older rows of the pages appended since the last fold: the same canonical URL, and the
   * same URL under another canonical URL (the page now declares a different one). Only older
   * revisions, so a newer write of the same page by another process is kept. A crash before this
   * step leaves the old rows beside the new ones until that page is written again; search shows a
   * page once.
   */
  private async removeSupersededRows(superseded: ReadonlyMap<string, number>): Promise<void> {
    const byRevision = new Map<number, string[]>();
    for (const [url, revision] of superseded) byRevision.set(revision, [...(byRevision.get(revision) ?? []), url]);
    for (const [revision, urls] of byRevision) {
      for (let start = 0; start < urls.length; start += 1000) {
        const list = sqlStringList(urls.slice(start, start + 1000));
        await withCommitRetries(() => this.table.delete(`(canonicalUrl IN (${list}) OR url IN (${list})) AND revision < ${revision}`));
      }
    }
  }

  /** Deleted rows leave search at once (deletion vectors); the next fold reclaims their space. */
  async remove(urls: string[]): Promise<number> {
    this.assertWritable();
    const distinct = [...new Set(urls)];
    if (distinct.length === 0) return 0;
    const list = sqlStringList(distinct);
    const { numDeletedRows } = await this.writes.run(() =>
      withCommitRetries(() => this.table.delete(`url IN (${list}) OR canonicalUrl IN (${list})`)),
    );
    return numDeletedRows;
  }

  /**
   * Makes every row appended so far searchable at the least cost. Up to maxUnindexedRows unindexed
   * rows, searches find them by a flat scan, so only the rows they supersede are deleted (deletion
   * files: no data file is rewritten); past it, they are folded in.
   */
  async makeSearchable(options: { keepVersionsMs?: number } = {}): Promise<'scanned' | 'folded'> {
    this.assertWritable();
    if ((await this.unindexedCost()) > this.settings.maxUnindexedRows) {
      await this.fold(options);
      return 'folded';
    }
    await this.writes.run(async () => {
      const superseded = new Map(this.superseded);
      for (const [url, revision] of this.supersededUnfolded) superseded.set(url, Math.max(revision, superseded.get(url) ?? 0));
      this.superseded = new Map();
      this.supersededUnfolded = new Map();
      await this.removeSupersededRows(superseded);
    });
    return 'scanned';
  }

  /**
   * Folds the rows added since the last fold into the inverted, B-tree and vector indexes, compacts
   * the table into one fragment (below Lance's 1M-row target) and deletes versions older than
   * keepVersionsMs, then deletes the rows the new ones supersede. It merges a delta into the
   * indexes rather than rebuilding them, but its cost still grows with the table (LanceDB 0.37
   * offers one optimize that also compacts), so callers share folds: every write committed before a
   * fold starts waits for that fold, and one committed while a fold runs waits for the next.
   */
  fold({ keepVersionsMs = this.settings.keepVersionsMs }: { keepVersionsMs?: number } = {}): Promise<void> {
    this.assertWritable();
    this.pendingFold ??= this.writes.run(async () => {
      this.pendingFold = null;
      const [before, after] = [this.supersededUnfolded, this.superseded];
      this.supersededUnfolded = new Map();
      this.superseded = new Map();
      this.appendedUnfolded = new Set();
      await this.removeSupersededRows(before);
      const optimize = () => withCommitRetries(() => this.table.optimize({ cleanupOlderThan: new Date(Date.now() - keepVersionsMs) }));
      await optimize();
      // The optimize compacted the appended rows apart from the folded ones (Lance merges only
      // fragments that the same indexes cover), then indexed them. Left as two fragments, they would
      // be merged by the next fold's compaction, which runs before its cleanup: with the versions kept
      // for readers, the table would then be on disk three times over. Merged now, the next fold
      // copies only the rows appended since (docs/benchmarks.md, "The closing fold's copies").
      if ((await this.table.stats()).fragmentStats.numFragments > 1) await optimize();
      await this.ensureVectorIndex();
      await this.removeSupersededRows(after);
    });
    return this.pendingFold;
  }

  /** Builds the vector index once the table holds enough vectors to need one; optimize() keeps it current after that. */
  private async ensureVectorIndex(): Promise<void> {
    if (this.dimensions === null || (await this.vectorIndexExists())) return;
    const vectors = await this.table.countRows(`${VECTOR_COLUMN} IS NOT NULL`);
    if (vectors < VECTOR_INDEX_MIN_ROWS) return;
    await withCommitRetries(() =>
      this.table.createIndex(VECTOR_COLUMN, {
        config: lancedb.Index.ivfPq({
          distanceType: 'cosine',
          numPartitions: Math.max(1, Math.round(Math.sqrt(vectors))),
          numSubVectors: this.dimensions! % 16 === 0 ? this.dimensions! / 16 : this.dimensions! / 8,
        }),
      }),
    );
    this.hasVectorIndex = true;
  }

  private async vectorIndexExists(): Promise<boolean> {
    this.hasVectorIndex ??= (await this.table.listIndices()).some((index) => index.columns.includes(VECTOR_COLUMN));
    return this.hasVectorIndex;
  }

  async unindexedRows(): Promise<number> {
    this.assertOpen();
    return (await this.table.indexStats(`${FULL_TEXT_COLUMNS[1]}_idx`))?.numUnindexedRows ?? 0;
  }

  /**
   * What the unindexed rows cost a search, in rows: their number, and UNINDEXED_FRAGMENT_ROWS for
   * each fragment beyond those of a compacted table (each commit since the fold added one). For
   * writers only: table.stats() takes a millisecond or two, too much to ask on every search.
   */
  private async unindexedCost(): Promise<number> {
    const [unindexed, { numRows, fragmentStats }] = await Promise.all([this.unindexedRows(), this.table.stats()]);
    if (unindexed === 0) return 0;
    const foldedFragments = Math.ceil((numRows - unindexed) / COMPACTED_FRAGMENT_ROWS);
    return unindexed + UNINDEXED_FRAGMENT_ROWS * Math.max(1, fragmentStats.numFragments - foldedFragments);
  }

  /**
   * Whether a search reads the indexes alone (LanceDB's fastSearch): when no row is unindexed, or
   * too many are for their flat scan. Asked per search (a lookup of a few µs), since another
   * process's commits change it.
   */
  private async readsIndexesOnly(): Promise<boolean> {
    const unindexed = await this.unindexedRows();
    return unindexed === 0 || unindexed > this.settings.maxUnindexedRows;
  }

  /**
   * A writer that died between adding rows and folding them may have left more unindexed rows than
   * searches scan; the next process to open the index folds them in the background (close() waits
   * for it).
   */
  async resumeInterruptedFold(): Promise<void> {
    if ((await this.unindexedCost()) > this.settings.maxUnindexedRows) {
      // Failures are not fatal here: the next write folds again.
      this.fold().catch(() => undefined);
    }
  }

  async stored(urls: readonly string[]): Promise<StoredPageState[]> {
    this.assertOpen();
    const distinct = [...new Set(urls)];
    if (distinct.length === 0) return [];
    const list = sqlStringList(distinct);
    const columns = ['canonicalUrl', 'url', 'contentHash', 'revision', ...(this.dimensions === null ? [] : [VECTOR_MODEL_COLUMN])];
    const rows = await this.table.query().where(`canonicalUrl IN (${list}) OR url IN (${list})`).select(columns).toArrow();
    const newest = new Map<string, StoredPageState & { revision: number }>();
    for (let row = 0; row < rows.numRows; row++) {
      const state = {
        canonicalUrl: rows.getChild('canonicalUrl')!.get(row) as string,
        url: rows.getChild('url')!.get(row) as string,
        contentHash: rows.getChild('contentHash')!.get(row) as string,
        vectorModel: (rows.getChild(VECTOR_MODEL_COLUMN)?.get(row) as string | null | undefined) ?? null,
        revision: Number(rows.getChild('revision')!.get(row)),
      };
      const known = newest.get(state.canonicalUrl);
      if (!known || known.revision < state.revision) newest.set(state.canonicalUrl, state);
    }
    return [...newest.values()].map(({ revision: _revision, ...state }) => state);
  }

  async *storedUrls(): AsyncIterable<string[]> {
    this.assertOpen();
    for await (const batch of this.table.query().select(['url', 'canonicalUrl'])) {
      const urls: string[] = [];
      const [url, canonicalUrl] = [batch.getChild('url'), batch.getChild('canonicalUrl')];
      for (let row = 0; row < batch.numRows; row++) urls.push(url!.get(row) as string, canonicalUrl!.get(row) as string);
      yield urls;
    }
  }

  async search(query: IndexQuery & { withVectors?: boolean }): Promise<{ hits: IndexHit[]; total: number | null }> {
    this.assertOpen();
    const stems = queryStems(query.query);
    const limit = Math.max(0, Math.floor(query.limit));
    const offset = Math.max(0, Math.floor(query.offset));
    if (stems.length === 0 || limit === 0) return { hits: [], total: stems.length === 0 ? 0 : null };

    const fullText = new lancedb.MultiMatchQuery(query.query, [...FULL_TEXT_COLUMNS], {
      boosts: [this.settings.titleBoost, 1],
      operator: query.match === 'all' ? lancedb.Operator.And : lancedb.Operator.Or,
    });
    const withVectors = query.withVectors === true && this.dimensions !== null;
    let search = this.table
      .search(fullText, 'fts')
      .select(withVectors ? [...SEARCH_COLUMNS, ...(await this.vectorColumns())] : SEARCH_COLUMNS)
      .limit(limit);
    if (await this.readsIndexesOnly()) search = search.fastSearch();
    if (offset > 0) search = search.offset(offset);
    const predicate = filterPredicate(query);
    if (predicate) search = search.where(predicate);
    const result = await search.toArrow();
    const hits = this.hitsOf(result, query.snippets === false ? null : stems, withVectors, (row) => Number(result.getChild('_score')?.get(row) ?? 0));
    // Exact when the page is not full; past that LanceDB's top-k search does not count matches.
    const total = result.numRows < limit ? offset + hits.length : null;
    return { hits, total };
  }

  async vectorSearch(query: IndexQuery & { vector: Float32Array; models: readonly string[] }): Promise<IndexHit[]> {
    this.assertOpen();
    const limit = Math.max(0, Math.floor(query.limit));
    if (this.dimensions === null || limit === 0 || query.vector.length !== this.dimensions || query.models.length === 0) return [];
    const modelFilter = `${VECTOR_MODEL_COLUMN} IN (${sqlStringList(query.models)})`;
    const filters = filterPredicate(query);
    let search = this.table
      .vectorSearch(query.vector)
      .column(VECTOR_COLUMN)
      .distanceType('cosine')
      .select([...PAGE_FIELDS, ...(await this.vectorColumns()), '_distance'])
      .limit(limit);
    // The query's own filters must hold before the nearest are taken (prefilter), or a narrow one
    // would leave none. The model's alone is checked after (postfilter): every row but those of an
    // unfinished re-embedding has it, and checking it on every row first costs as much as the search
    // (13 of 30 ms on SciFact's 5k pages).
    search = filters ? search.where(`${modelFilter} AND ${filters}`) : search.where(modelFilter).postfilter();
    // Without an index every row is scanned; with one, unindexed rows are scanned as for full text.
    if (await this.vectorIndexExists()) {
      search = search.nprobes(VECTOR_NPROBES).refineFactor(VECTOR_REFINE_FACTOR);
      if (await this.readsIndexesOnly()) search = search.fastSearch();
    }
    const result = await search.toArrow();
    return this.hitsOf(result, query.snippets === false ? null : queryStems(query.query), true, (row) => 1 - Number(result.getChild('_distance')?.get(row) ?? 1));
  }

  snippet(text: string, query: string): string {
    return buildSnippet(text, new StemMatcher(queryStems(query)), this.settings.snippetLength);
  }

  /** A result's pages as hits, each page once, with snippets for the query's stems (none for null). */
  private hitsOf(result: ColumnarResult, stems: string[] | null, withVectors: boolean, scoreOf: (row: number) => number): IndexHit[] {
    const pages = pagesFromArrow(result);
    const matcher = stems === null ? null : new StemMatcher(stems);
    const seen = new Set<string>();
    const hits: IndexHit[] = [];
    pages.forEach((page, row) => {
      // Two revisions of a page are both found only between a write and the delete that follows it.
      if (seen.has(page.canonicalUrl)) return;
      seen.add(page.canonicalUrl);
      hits.push({
        page,
        score: scoreOf(row),
        snippet: matcher === null ? '' : buildSnippet(page.text, matcher, this.settings.snippetLength),
        ...(withVectors ? { vectors: vectorsFromArrow(result, row) } : {}),
      });
    });
    return hits;
  }

  async get(url: string): Promise<IndexedPage | null> {
    this.assertOpen();
    const literal = sqlString(url);
    const rows = await this.table
      .query()
      .where(`canonicalUrl = ${literal} OR url = ${literal}`)
      .select((await this.markdown.present()) ? [...GET_COLUMNS, MARKDOWN_COLUMN] : GET_COLUMNS)
      .limit(16)
      .toArrow();
    const revisions = rows.getChild('revision');
    const candidates = pagesFromArrow(rows).map((page, row) => ({ page, revision: Number(revisions?.get(row)) }));
    // The page whose identity this is beats one that merely was fetched at this URL; then the newest.
    candidates.sort(
      (a, b) =>
        Number(b.page.canonicalUrl === url) - Number(a.page.canonicalUrl === url) || b.revision - a.revision,
    );
    return candidates[0]?.page ?? null;
  }

  async stats(): Promise<IndexStats> {
    this.assertOpen();
    const [documents, version, bytesOnDisk] = await Promise.all([
      this.table.countRows(),
      this.table.version(),
      this.location.kind === 'directory' ? directorySize(this.location.path) : storeSize(this.location),
    ]);
    return {
      documents,
      domains: await this.countDomains(version),
      bytesOnDisk,
      lastUpdated: documents === 0 ? null : await this.lastCommitTime(version),
      vectors: await this.countVectors(),
    };
  }

  private async countVectors(): Promise<Record<string, number>> {
    if (this.dimensions === null) return {};
    const counts: Record<string, number> = {};
    for await (const batch of this.table.query().where(`${VECTOR_MODEL_COLUMN} IS NOT NULL`).select([VECTOR_MODEL_COLUMN])) {
      const column = batch.getChild(VECTOR_MODEL_COLUMN);
      for (let row = 0; row < batch.numRows; row++) {
        const model = column?.get(row) as string;
        counts[model] = (counts[model] ?? 0) + 1;
      }
    }
    return counts;
  }

  private async countDomains(version: number): Promise<number> {
    if (this.domainCount?.version !== version) {
      const domains = new Set<string>();
      for await (const batch of this.table.query().select(['domain'])) {
        const column = batch.getChild('domain');
        for (let row = 0; row < batch.numRows; row++) domains.add(column?.get(row) as string);
      }
      this.domainCount = { version, domains: domains.size };
    }
    return this.domainCount.domains;
  }

  private async lastCommitTime(version: number): Promise<string | null> {
    const versions = await this.table.listVersions();
    const current = versions.find((entry) => entry.version === version) ?? versions.at(-1);
    return current ? current.timestamp.toISOString() : null;
  }

  async *export(): AsyncIterable<IndexedPage> {
    this.assertOpen();
    // One snapshot: pages written while the export runs are not half-seen.
    const columns = (await this.markdown.present()) ? [...PAGE_FIELDS, MARKDOWN_COLUMN] : [...PAGE_FIELDS];
    for await (const batch of this.table.query().select(columns)) {
      yield* pagesFromArrow(batch);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writes.drain();
    this.table.close();
    this.connection.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('local index: used after close()');
  }

  private assertWritable(): void {
    this.assertOpen();
    if (this.settings.readOnly) throw new ReadOnlyIndexError('local index: this copy is read-only; write to the index with `searchgate index add --dir <its location>`');
  }

  get readOnly(): boolean {
    return this.settings.readOnly;
  }
}

export class ReadOnlyIndexError extends Error {}

/** The bytes of an index on object storage, from one listing of its prefix. */
async function storeSize(location: Extract<IndexLocation, { kind: 'object-store' }>): Promise<number> {
  const store = new ObjectStore(location.bucket, location.prefix, STORE_LISTING_TIMEOUT_MS);
  try {
    return (await store.list()).reduce((total, object) => total + object.size, 0);
  } finally {
    store.close();
  }
}
const STORE_LISTING_TIMEOUT_MS = 30_000;

async function directorySize(directory: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    try {
      total += (await stat(join(entry.parentPath, entry.name))).size;
    } catch {
      // Cleanup of an old version may delete a file between the listing and the stat.
    }
  }
  return total;
}
