/**
 * The local index as a set of tables ("shards") of at most `shardRows` pages each, so that no fold
 * has to rewrite more than one shard: LanceDB's fold compacts its whole table and merges the new
 * rows into the table's whole inverted index, and its memory grows with the table (about 1.7 MiB per
 * 1,000 pages, docs/benchmarks.md, "Index at scale"). With shards, the fold's memory stops growing at
 * the shard's size, whatever the index's.
 *
 * - Writes go to the newest shard. When it is full, it is folded and a new one is made with its
 *   layout (vector columns included); older shards are only read, and delete the rows a newer
 *   revision in another shard replaces, once that one is searchable.
 * - Reads ask every shard and merge: full-text and vector hits by score, lookups by newest shard.
 *   BM25 is computed within each shard, so scores of pages in different shards weigh their terms
 *   by slightly different statistics; shards of the same kind of pages keep them close.
 * - Another process's new shard (a writer's, while a gateway serves) is found within
 *   readConsistencyMs, as the writer's commits are.
 */
import type * as lancedb from '@lancedb/lancedb';
import type { EmbeddedPage, IndexedPage, IndexHit, IndexQuery, IndexStats, LocalIndex, StoredPageState } from '../types.js';
import type { IndexLocation } from './location.js';
import { PAGES_TABLE } from './schema.js';
import { assertUsable, indexBytes, openShard, type PagesTable, type TableSettings } from './table.js';

const LATER_SHARD = new RegExp(`^${PAGES_TABLE}-[1-9]\\d*$`);

/** The shards' tables: "pages" (the only one of an index made before shards), then "pages-2", "pages-3"… */
export function shardNames(tableNames: readonly string[]): string[] {
  const numberOf = (name: string) => (name === PAGES_TABLE ? 1 : Number(name.slice(PAGES_TABLE.length + 1)));
  return tableNames
    .filter((name) => name === PAGES_TABLE || LATER_SHARD.test(name))
    .sort((a, b) => numberOf(a) - numberOf(b));
}

function shardName(position: number): string {
  return position === 1 ? PAGES_TABLE : `${PAGES_TABLE}-${position}`;
}

export interface ShardSettings extends TableSettings {
  /** A shard takes no more pages past this many: the writer starts a new one. */
  shardRows: number;
  /** How often the list of shards is read again for another process's new ones. */
  readConsistencyMs: number;
}

export class ShardedIndex implements LocalIndex {
  private shardsCheckedAt = performance.now();
  /** Rolling over to a new shard and appending, one at a time. */
  private writing: Promise<unknown> = Promise.resolve();
  private isClosed = false;

  private constructor(
    private readonly location: IndexLocation,
    private readonly connection: lancedb.Connection,
    private readonly where: string,
    /** Oldest first; the last one takes the writes. */
    private readonly shards: PagesTable[],
    private readonly settings: ShardSettings,
  ) {}

  static async open(location: IndexLocation, connection: lancedb.Connection, where: string, settings: ShardSettings): Promise<ShardedIndex> {
    const names = shardNames(await connection.tableNames());
    const shards: PagesTable[] = [];
    try {
      // An empty directory gets its first shard ("holds no index" for a read-only opening).
      for (const name of names.length > 0 ? names : [PAGES_TABLE]) shards.push(await openShard(connection, name, where, settings));
    } catch (error) {
      await Promise.all(shards.map((shard) => shard.close()));
      connection.close();
      throw error;
    }
    return new ShardedIndex(location, connection, where, shards, settings);
  }

  private get active(): PagesTable {
    return this.shards.at(-1)!;
  }

  get vectorDimensions(): number | null {
    return this.active.vectorDimensions;
  }

  get readOnly(): boolean {
    return this.settings.readOnly;
  }

  /** Opens the shards another process made since this one last looked, at most once per readConsistencyMs. */
  private async refreshShards(): Promise<void> {
    this.assertOpen();
    if (performance.now() - this.shardsCheckedAt < this.settings.readConsistencyMs) return;
    this.shardsCheckedAt = performance.now();
    const known = new Set(this.shards.map((shard) => shard.name));
    for (const name of shardNames(await this.connection.tableNames())) {
      if (!known.has(name)) this.shards.push(await openShard(this.connection, name, this.where, this.settings));
    }
  }

  async refreshVectorDimensions(): Promise<number | null> {
    await this.refreshShards();
    // Every shard reads its own width again; the newest's is the index's.
    const widths = await Promise.all(this.shards.map((shard) => shard.refreshVectorDimensions()));
    return widths.at(-1)!;
  }

  async ensureVectorColumns(dimensions: number): Promise<void> {
    this.assertWritable();
    for (const shard of this.shards) await shard.ensureVectorColumns(dimensions);
  }

  async upsert(pages: Array<IndexedPage | EmbeddedPage>): Promise<void> {
    await this.append(pages);
    await this.fold();
  }

  append(pages: ReadonlyArray<IndexedPage | EmbeddedPage>, replacing?: ReadonlySet<string>): Promise<void> {
    this.assertWritable();
    const done = this.writing.then(() => this.appendInTurn(pages, replacing));
    this.writing = done.catch(() => undefined);
    return done;
  }

  private async appendInTurn(pages: ReadonlyArray<IndexedPage | EmbeddedPage>, replacing?: ReadonlySet<string>): Promise<void> {
    await this.refreshShards();
    if (this.active.rows >= this.settings.shardRows) await this.startShard();
    const revision = await this.active.append(pages, replacing);
    const older = this.shards.slice(0, -1);
    if (revision === null || older.length === 0) return;
    // Only shards that hold one of these pages get deletions: a delete costs a commit even when it finds nothing.
    const replaced = replacing ? pages.filter((page) => replacing.has(page.canonicalUrl)) : pages;
    if (replaced.length === 0) return;
    const urls = replaced.flatMap((page) => [page.canonicalUrl, page.url]);
    for (const shard of older) {
      const held = new Set((await shard.stored(urls)).flatMap((state) => [state.canonicalUrl, state.url]));
      const found = replaced.filter((page) => held.has(page.canonicalUrl) || held.has(page.url));
      if (found.length > 0) shard.supersede(found.flatMap((page) => [page.canonicalUrl, page.url]), revision);
    }
  }

  /** Folds the full shard (its rows must not wait, unindexed, for a fold that would never come) and opens the next. */
  private async startShard(): Promise<void> {
    const full = this.active;
    if ((await full.unindexedRows()) > 0 || full.hasDeletions) await full.fold();
    this.shards.push(await openShard(this.connection, shardName(this.shards.length + 1), this.where, this.settings, await full.layout()));
  }

  /**
   * Makes the newest shard's rows searchable, then deletes the rows they replace in older shards
   * (their makeSearchable only deletes: they have no unindexed rows).
   */
  async makeSearchable(options: { keepVersionsMs?: number } = {}): Promise<'scanned' | 'folded'> {
    this.assertWritable();
    await this.writing;
    const made = await this.active.makeSearchable(options);
    for (const shard of this.shards.slice(0, -1)) if (shard.hasDeletions) await shard.makeSearchable(options);
    return made;
  }

  /**
   * Folds the newest shard, then every older one that deleted rows since its last fold (which
   * reclaims them and deletes its old versions), one at a time: the memory is one shard's.
   */
  async fold(options: { keepVersionsMs?: number } = {}): Promise<void> {
    this.assertWritable();
    await this.writing;
    await this.active.fold(options);
    for (const shard of this.shards.slice(0, -1)) if (shard.hasDeletions) await shard.fold(options);
  }

  async unindexedRows(): Promise<number> {
    const counts = await Promise.all(this.shards.map((shard) => shard.unindexedRows()));
    return counts.reduce((total, count) => total + count, 0);
  }

  async remove(urls: string[]): Promise<number> {
    this.assertWritable();
    await this.writing;
    let removed = 0;
    for (const shard of this.shards) removed += await shard.remove(urls);
    return removed;
  }

  async stored(urls: readonly string[]): Promise<StoredPageState[]> {
    await this.refreshShards();
    if (this.shards.length === 1) return this.active.stored(urls);
    // A page in two shards (between its new row's write and the old one's delete): the newer shard's.
    const newest = new Map<string, StoredPageState>();
    for (const states of await Promise.all(this.shards.map((shard) => shard.stored(urls)))) {
      for (const state of states) newest.set(state.canonicalUrl, state);
    }
    return [...newest.values()];
  }

  async *storedUrls(): AsyncIterable<string[]> {
    await this.refreshShards();
    for (const shard of [...this.shards]) yield* shard.storedUrls();
  }

  async search(query: IndexQuery & { withVectors?: boolean }): Promise<{ hits: IndexHit[]; total: number | null }> {
    await this.refreshShards();
    if (this.shards.length === 1) return this.active.search(query);
    // Each shard's best offset + limit, merged: the page asked for is among them.
    const offset = Math.max(0, Math.floor(query.offset));
    const limit = Math.max(0, Math.floor(query.limit));
    const results = await Promise.all(this.shards.map((shard) => shard.search({ ...query, offset: 0, limit: offset + limit })));
    const hits = mergeHits(results.map((result) => result.hits));
    // Every shard counted exactly (none had a full page of matches): the merge holds them all.
    const exact = results.every((result) => result.total !== null);
    return { hits: hits.slice(offset, offset + limit), total: exact ? hits.length : null };
  }

  async vectorSearch(query: IndexQuery & { vector: Float32Array; models: readonly string[] }): Promise<IndexHit[]> {
    await this.refreshShards();
    if (this.shards.length === 1) return this.active.vectorSearch(query);
    const results = await Promise.all(this.shards.map((shard) => shard.vectorSearch(query)));
    return mergeHits(results).slice(0, Math.max(0, Math.floor(query.limit)));
  }

  snippet(text: string, query: string): string {
    return this.active.snippet(text, query);
  }

  async get(url: string): Promise<IndexedPage | null> {
    await this.refreshShards();
    const found = await Promise.all(this.shards.map((shard) => shard.get(url)));
    // As within a shard: the page whose identity this is beats one merely fetched at it; then the newest shard.
    let best: IndexedPage | null = null;
    for (const page of found) {
      if (page && (best === null || page.canonicalUrl === url || best.canonicalUrl !== url)) best = page;
    }
    return best;
  }

  async stats(): Promise<IndexStats> {
    await this.refreshShards();
    const [bytesOnDisk, ...tables] = await Promise.all([indexBytes(this.location), ...this.shards.map((shard) => shard.tableStats())]);
    const domains = new Set<string>();
    const vectors: Record<string, number> = {};
    let documents = 0;
    let lastUpdated: string | null = null;
    for (const table of tables) {
      documents += table.documents;
      for (const domain of table.domains) domains.add(domain);
      for (const [model, count] of Object.entries(table.vectors)) vectors[model] = (vectors[model] ?? 0) + count;
      if (table.lastUpdated !== null && (lastUpdated === null || table.lastUpdated > lastUpdated)) lastUpdated = table.lastUpdated;
    }
    return { documents, domains: domains.size, bytesOnDisk, shards: this.shards.length, lastUpdated, vectors };
  }

  async *export(): AsyncIterable<IndexedPage> {
    await this.refreshShards();
    for (const shard of [...this.shards]) yield* shard.export();
  }

  get closed(): boolean {
    return this.isClosed;
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    await this.writing;
    await Promise.all(this.shards.map((shard) => shard.close()));
    this.connection.close();
  }

  private assertOpen(): void {
    assertUsable(this, 'read');
  }

  private assertWritable(): void {
    assertUsable(this, 'write');
  }
}

/** Hits of several shards by score, best first, each page once (the better-scored of its two rows). */
function mergeHits(lists: IndexHit[][]): IndexHit[] {
  const seen = new Set<string>();
  return lists
    .flat()
    .sort((a, b) => b.score - a.score)
    .filter((hit) => !seen.has(hit.page.canonicalUrl) && seen.add(hit.page.canonicalUrl));
}
