/**
 * One LanceDB table of pages with its full-text, scalar and vector indexes: a shard of the local
 * index (shards.ts). Its writes, folds and searches are described in index.ts.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import type { EmbeddedPage, IndexedPage, IndexHit, IndexQuery, StoredPageState } from '../types.js';
import { filterPredicate, sqlString, sqlStringList } from './filters.js';
import {
  MARKDOWN_COLUMN,
  PAGE_FIELDS,
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
import type { IndexLocation } from './location.js';
import { ObjectStore } from './object-store.js';
import { buildSnippet } from './snippet.js';
import { queryStems, StemMatcher } from './terms.js';

/**
 * What a fragment of unindexed rows costs a search, in rows: 500 one-row commits cost the hybrid
 * search about 170 ms, one commit of 500 rows about 14 ms (docs/benchmarks.md, "Small commits
 * without a fold"). So a trickle of one-page commits folds after about 45 of them.
 */
const UNINDEXED_FRAGMENT_ROWS = 10;
/** LanceDB's compaction target: a folded table holds about one fragment per this many rows. */
const COMPACTED_FRAGMENT_ROWS = 1_048_576;

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


/** A table's schema as LanceDB gives it (in the Arrow module bundled with LanceDB). */
export type TableLayout = Awaited<ReturnType<lancedb.Table['schema']>>;

/**
 * Opens one shard's table, or creates it: the first with the page layout, a later one with the
 * layout of the shard before it (its vector columns included), so that every shard reads alike.
 */
async function openPagesTable(
  connection: lancedb.Connection,
  name: string,
  where: string,
  { readOnly, layout }: { readOnly: boolean; layout?: TableLayout },
): Promise<lancedb.Table> {
  // An existing table is opened as it is (creating over it would only fail on a layout change).
  const exists = (await connection.tableNames()).includes(name);
  if (!exists && readOnly) throw new Error(`local index: ${where} holds no index`);
  const table = exists
    ? await connection.openTable(name)
    : await connection.createEmptyTable(name, layout ?? pageSchema(null), { mode: 'create', existOk: true });
  const found = (await table.schema()).metadata.get(SCHEMA_VERSION_KEY);
  if (found !== SCHEMA_VERSION) {
    table.close();
    throw new Error(
      `local index: ${where} holds pages in layout ${found ?? 'unknown'}, this version reads layout ` +
        `${SCHEMA_VERSION}; export it with the version that wrote it, or delete the directory and re-ingest`,
    );
  }
  return table;
}

/**
 * Opens (or creates, with the layout given) one shard: a writer also gives it what an older table
 * lacks (indexes, the markdown column) and folds what an interrupted writer left unfolded.
 */
export async function openShard(
  connection: lancedb.Connection,
  name: string,
  where: string,
  settings: TableSettings,
  layout?: TableLayout,
): Promise<PagesTable> {
  const table = await openPagesTable(connection, name, where, { readOnly: settings.readOnly, layout });
  if (!settings.readOnly) {
    await ensureIndexes(table);
    await ensureMarkdownColumn(table);
  }
  const schema = await table.schema();
  const shard = new PagesTable(name, table, vectorDimensionsOf(schema), hasColumn(schema, TITLE_VECTOR_COLUMN), hasColumn(schema, MARKDOWN_COLUMN), settings);
  await shard.countRows();
  if (!settings.readOnly) await shard.resumeInterruptedFold();
  return shard;
}

/** Creates what a new directory lacks; another process creating the same index at once is fine. */
async function ensureIndexes(table: lancedb.Table): Promise<void> {
  const wanted: [string, lancedb.Index][] = [
    ...FULL_TEXT_COLUMNS.map((column): [string, lancedb.Index] => [column, lancedb.Index.fts(FULL_TEXT_OPTIONS)]),
    ...SCALAR_INDEXES.map(([column, index]): [string, lancedb.Index] => [column, index()]),
  ];
  // One listing for all: a writer opens every shard, and most have every index.
  const indexed = new Set((await table.listIndices()).flatMap((index) => index.columns));
  for (const [column, config] of wanted) {
    const hasIndex = async () => (await table.listIndices()).some((index) => index.columns.includes(column));
    if (indexed.has(column)) continue;
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

export interface TableSettings {
  titleBoost: number;
  snippetLength: number;
  keepVersionsMs: number;
  maxUnindexedRows: number;
  readOnly: boolean;
}

/** Distinct domains of one table version: stats() scans the domain column once per version. */
interface DomainCount {
  version: number;
  domains: ReadonlySet<string>;
}

export interface TableStats {
  documents: number;
  domains: ReadonlySet<string>;
  lastUpdated: string | null;
  vectors: Record<string, number>;
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
  private checking: Promise<boolean> | null = null;

  constructor(
    private readonly table: lancedb.Table,
    private readonly name: string,
    /** Whether the table had it when last looked at. */
    public known: boolean,
  ) {}

  async present(): Promise<boolean> {
    if (!this.known && performance.now() - this.checkedAt >= SCHEMA_RECHECK_MS) {
      this.checkedAt = performance.now();
      this.checking = this.table
        .schema()
        .then((schema) => (this.known = hasColumn(schema, this.name)))
        .finally(() => (this.checking = null));
    }
    // A search's full-text and vector legs ask at once: both read the look either started.
    if (this.checking) await this.checking.catch(() => undefined);
    return this.known;
  }

  /** This process added it. */
  added(): void {
    this.known = true;
  }
}

/**
 * One table of pages, a shard of the local index: every LocalIndex operation on this table alone.
 * ShardedIndex (shards.ts) spreads an index over several and is what callers get.
 */
export class PagesTable {
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
  private rowsWritten = 0;
  private deletedSinceFold = false;
  private hasVectorIndex: boolean | null = null;
  private isClosed = false;

  constructor(
    /** The table's name: "pages", then "pages-2", "pages-3"… (shards.ts). */
    readonly name: string,
    private readonly table: lancedb.Table,
    private dimensions: number | null,
    hasTitleVectors: boolean,
    hasMarkdown: boolean,
    private readonly settings: TableSettings,
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

  /** Appends as LocalIndex.append does; returns the revision the rows were written with (null: none were). */
  async append(pages: ReadonlyArray<IndexedPage | EmbeddedPage>, replacing?: ReadonlySet<string>): Promise<number | null> {
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
    if (rows.length === 0) return null;
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
    this.rowsWritten += rows.length;
    return revision;
  }

  /**
   * Rows of this table that a newer revision written to another shard replaces: they are deleted at
   * this table's next makeSearchable() or fold(), which the shard set calls right after the one that
   * makes the new rows searchable, so the page never vanishes meanwhile.
   */
  supersede(urls: Iterable<string>, revision: number): void {
    this.assertWritable();
    for (const url of urls) this.superseded.set(url, Math.max(revision, this.superseded.get(url) ?? 0));
  }

  /** Whether rows of this table wait to be deleted (supersede()) or were deleted since its last fold. */
  get hasDeletions(): boolean {
    return this.superseded.size > 0 || this.deletedSinceFold;
  }

  /**
   * Rows in the table as of its opening plus those appended since: the measure a shard is full by.
   * Deletions are not counted off, so a shard holds at most this many rows.
   */
  get rows(): number {
    return this.rowsWritten;
  }

  /** Counts the table's rows, where rows starts from (at opening). */
  async countRows(): Promise<void> {
    this.rowsWritten = await this.table.countRows();
  }

  /** The table's layout, which a new shard copies. */
  layout(): Promise<TableLayout> {
    return this.table.schema();
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
        const { numDeletedRows } = await withCommitRetries(() => this.table.delete(`(canonicalUrl IN (${list}) OR url IN (${list})) AND revision < ${revision}`));
        if (numDeletedRows > 0) this.deletedSinceFold = true;
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
    if (numDeletedRows > 0) this.deletedSinceFold = true;
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
   * indexes rather than rebuilding them, but its time and memory still grow with the table (LanceDB
   * 0.37 offers one optimize that also compacts): hence the shards (shards.ts), and callers share
   * folds: every write committed before a fold starts waits for that fold, and one committed while
   * a fold runs waits for the next.
   */
  fold({ keepVersionsMs = this.settings.keepVersionsMs }: { keepVersionsMs?: number } = {}): Promise<void> {
    this.assertWritable();
    this.pendingFold ??= this.writes.run(async () => {
      this.pendingFold = null;
      const [before, after] = [this.supersededUnfolded, this.superseded];
      this.supersededUnfolded = new Map();
      this.superseded = new Map();
      this.appendedUnfolded = new Set();
      this.deletedSinceFold = false;
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

  /** What stats() reports of this table; its bytes on disk are the index's, counted once for every shard. */
  async tableStats(): Promise<TableStats> {
    this.assertOpen();
    const [documents, version] = await Promise.all([this.table.countRows(), this.table.version()]);
    return {
      documents,
      domains: await this.distinctDomains(version),
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

  private async distinctDomains(version: number): Promise<ReadonlySet<string>> {
    if (this.domainCount?.version !== version) {
      const domains = new Set<string>();
      for await (const batch of this.table.query().select(['domain'])) {
        const column = batch.getChild('domain');
        for (let row = 0; row < batch.numRows; row++) domains.add(column?.get(row) as string);
      }
      this.domainCount = { version, domains };
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

  get closed(): boolean {
    return this.isClosed;
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    await this.writes.drain();
    this.table.close();
  }

  private assertOpen(): void {
    assertUsable(this, 'read');
  }

  private assertWritable(): void {
    assertUsable(this, 'write');
  }

  get readOnly(): boolean {
    return this.settings.readOnly;
  }
}



/** The bytes of an index on object storage, from one listing of its prefix. */
export class ReadOnlyIndexError extends Error {}

/** Throws for any use of a closed index (or shard), and for a write to a read-only copy. */
export function assertUsable(index: { readonly closed: boolean; readonly readOnly: boolean }, use: 'read' | 'write'): void {
  if (index.closed) throw new Error('local index: used after close()');
  if (use === 'write' && index.readOnly) {
    throw new ReadOnlyIndexError('local index: this copy is read-only; write to the index with `searchgate index add --dir <its location>`');
  }
}

/** The bytes the whole index (every shard) holds on its disk or store. */
export function indexBytes(location: IndexLocation): Promise<number> {
  return location.kind === 'directory' ? directorySize(location.path) : storeSize(location);
}

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
