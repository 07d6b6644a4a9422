/**
 * The one way pages get into the local index in bulk: `searchgate index add` (JSONL, WARC, sitemaps,
 * crawls) and the crawler write through it. Its cost per page stays flat as the index grows:
 *
 * - Pages are gathered into large batches; a batch is looked up (what is already in, by URL), its
 *   new and changed pages embedded (in the model's worker thread), and appended: an append costs the
 *   same on a small index as on a large one.
 * - The expensive step, folding appended rows into the full-text, scalar and vector indexes, runs
 *   once per `foldEveryPages` new rows, and at close() only when the unindexed rows are more than
 *   searches scan (LocalIndexOptions.maxUnindexedRows): a fold rewrites the whole table (LanceDB
 *   compacts as it folds), which every replica of an index on object storage then copies again. A
 *   smaller run leaves its rows unindexed and searchable by a flat scan: pages are found when a run
 *   returns either way. A crawl's trickle is made searchable the same way `foldEveryMs` after its
 *   first page, so its pages are found within that delay.
 * - A page already in the index with the same text (content hash) and vectors of the current model
 *   is skipped: running the same command again after an interruption finishes the work without
 *   redoing it, and re-embedding after a model change redoes only what changed. Only pages that may
 *   be in the index (a Bloom filter of its URLs, url-filter.ts) are looked up, since a lookup scans
 *   the rows appended since the last fold: a fresh page costs nothing.
 * - At most two batches are in flight (one embedding, one writing), so memory stays bounded however
 *   large the input; a producer awaits ready() before adding more.
 */
import type { EmbeddedPage, IndexedPage, LocalIndex, PageVectors, StoredPageState } from '../types.js';
import { UrlFilter } from './url-filter.js';

/** Embeds pages at write time; the same model embeds queries at search time. */
export interface PageEmbedder {
  /** Names the model and how a page is embedded (its windows, its title): vectors of one stamp are comparable. */
  readonly model: string;
  readonly dimensions: number;
  /** Unit vectors of each page's windows (title and text), the first window first, and of its title alone. */
  embedPages(pages: ReadonlyArray<{ title: string; text: string }>, signal?: AbortSignal): Promise<PageEmbedding[]>;
}

export interface PageEmbedding {
  windows: Float32Array[];
  /** Null for a page without a title. */
  title: Float32Array | null;
}

export interface WriterOptions {
  /** The model that embeds pages; without one pages are stored without vectors (BM25 alone). */
  embedder?: PageEmbedder | null;
  /** Pages per append. */
  batchPages?: number;
  /** Longest a page waits for its batch to fill (a crawl's pages trickle in). */
  batchDelayMs?: number;
  /** Fold after this many pages were appended since the last fold. */
  foldEveryPages?: number;
  /**
   * When pages trickle in (a crawl: batches written before they fill), make them searchable this
   * long after the first page appended since (a fold only once they are more than searches scan).
   * A bulk input (full batches) folds by count only.
   */
  foldEveryMs?: number;
  /** See WRITER_DEFAULTS.keepVersionsMs. */
  keepVersionsMs?: number;
  /** Fold at close() however few rows are unindexed (`index add --fold`). */
  foldAtClose?: boolean;
  /** Called after each batch and fold. */
  onProgress?: (counters: Readonly<WriterCounters>) => void;
  signal?: AbortSignal;
}

export interface WriterCounters {
  /** Pages handed to the writer. */
  received: number;
  /** Pages appended (new or changed). */
  written: number;
  /** Pages already in the index as they are: skipped. */
  unchanged: number;
  /** Pages written with vectors. */
  embedded: number;
  folds: number;
  /** Time spent embedding and folding, in ms: where a run's time goes. */
  embedMs: number;
  foldMs: number;
}

export const WRITER_DEFAULTS = {
  batchPages: 2048,
  batchDelayMs: 1000,
  foldEveryPages: 100_000,
  foldEveryMs: 60_000,
  /**
   * Versions a fold leaves behind are deleted this long after: enough for a gateway reading the index
   * (which looks for a new version every second) to move on, short enough that a long run does not
   * pile up copies of the table (peak disk stays near twice the final size).
   */
  keepVersionsMs: 10_000,
} as const;

interface Prepared {
  pages: EmbeddedPage[];
  replacing: ReadonlySet<string>;
}

interface Pending {
  page: IndexedPage;
  resolve(): void;
  reject(error: unknown): void;
}

/** Batches ready to process, in order; at most this many are embedding or writing at once. */
const MAX_BATCHES_IN_FLIGHT = 2;
/** URLs the Bloom filter has room for beyond the index's own (2.4 MB at 1% false positives). */
const MIN_FILTER_ENTRIES = 2_000_000;
/** Readers look for a new version every second (LocalIndexOptions.readConsistencyMs); a little more. */
const READERS_CATCH_UP_MS = 3_000;

/**
 * Deletes the versions a fold left behind once readers have had time to move to the new one (with
 * keepVersionsMs 0 the fold itself did that), so that the index ends at its own size.
 */
export async function removeOldVersions(index: LocalIndex, keepVersionsMs: number): Promise<void> {
  if (keepVersionsMs === 0) return;
  await new Promise((resolve) => setTimeout(resolve, Math.min(keepVersionsMs, READERS_CATCH_UP_MS)));
  await index.fold({ keepVersionsMs: 0 });
}

export class IndexWriter {
  readonly counters: WriterCounters = { received: 0, written: 0, unchanged: 0, embedded: 0, folds: 0, embedMs: 0, foldMs: 0 };
  private batch: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private foldTimer: NodeJS.Timeout | undefined;
  /** The last embedding and the last write of the batches dispatched so far: each batch follows both. */
  private embedding: Promise<unknown> = Promise.resolve();
  private writing: Promise<void> = Promise.resolve();
  private inFlight = 0;
  private readonly waiters: Array<() => void> = [];
  /**
   * What this writer appended since the last fold, by canonical URL: the index's lookup reads only
   * folded rows (B-trees), since scanning the unfolded ones would grow each batch's cost with the run.
   */
  private appendedSinceFold = new Map<string, StoredPageState>();
  private readonly options: Required<Omit<WriterOptions, 'embedder' | 'onProgress' | 'signal'>>;
  private failure: unknown = null;

  private constructor(
    private readonly index: LocalIndex,
    private readonly embedder: PageEmbedder | null,
    /** The URLs the index held when the writer opened: only pages that may be among them are looked up. */
    private readonly known: UrlFilter,
    options: WriterOptions,
  ) {
    this.options = {
      batchPages: options.batchPages ?? WRITER_DEFAULTS.batchPages,
      batchDelayMs: options.batchDelayMs ?? WRITER_DEFAULTS.batchDelayMs,
      foldEveryPages: options.foldEveryPages ?? WRITER_DEFAULTS.foldEveryPages,
      foldEveryMs: options.foldEveryMs ?? WRITER_DEFAULTS.foldEveryMs,
      keepVersionsMs: options.keepVersionsMs ?? WRITER_DEFAULTS.keepVersionsMs,
      foldAtClose: options.foldAtClose ?? false,
    };
    this.onProgress = options.onProgress ?? (() => {});
    this.signal = options.signal;
  }

  private readonly onProgress: (counters: Readonly<WriterCounters>) => void;
  private readonly signal: AbortSignal | undefined;

  /** A writer for `index`; with an embedder, the index gains vector columns of its width if it has none. */
  static async open(index: LocalIndex, options: WriterOptions = {}): Promise<IndexWriter> {
    const embedder = options.embedder ?? null;
    if (embedder) await index.ensureVectorColumns(embedder.dimensions);
    const { documents } = await index.stats();
    // Room for the pages this run adds too: they join the filter as they are folded.
    const known = new UrlFilter(2 * documents + MIN_FILTER_ENTRIES);
    for await (const urls of index.storedUrls()) for (const url of urls) known.add(url);
    return new IndexWriter(index, embedder, known, options);
  }

  /**
   * Writes a batch job's pages through a writer and closes it, so they are appended in batches and
   * folded on the writer's schedule (at the end, for fewer than foldEveryPages, if they are more than
   * searches scan); throws when a batch failed.
   */
  static async writeAll(index: LocalIndex, pages: Iterable<IndexedPage>, options: WriterOptions = {}): Promise<Readonly<WriterCounters>> {
    const writer = await IndexWriter.open(index, options);
    try {
      for (const page of pages) {
        await writer.ready();
        // A failed batch fails the writer: ready() rejects for the pages after it, the check below for the last.
        void writer.add(page).catch(() => {});
      }
    } finally {
      await writer.close();
    }
    if (writer.failure) throw writer.failure;
    return writer.counters;
  }

  /** Resolves when the page is appended (searchable once close() or a trickle's delay makes it so); rejects when its batch failed. */
  add(page: IndexedPage): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    this.counters.received += 1;
    return new Promise<void>((resolve, reject) => {
      this.batch.push({ page, resolve, reject });
      if (this.batch.length >= this.options.batchPages) this.dispatch();
      else this.timer ??= setTimeout(() => this.batchTimeUp(), this.options.batchDelayMs);
    });
  }

  /** Resolves when another page may be added without growing the work in flight past its bound. */
  ready(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.inFlight < MAX_BATCHES_IN_FLIGHT || this.batch.length < this.options.batchPages - 1) return Promise.resolve();
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Appends every page added so far. */
  async flush(): Promise<void> {
    this.dispatch();
    await this.writing;
  }

  /**
   * Appends what is left and makes it searchable: every page added is found when this resolves. If
   * that took a fold, then, once readers have had time to move to the new version, the versions the
   * run left behind are deleted, so the index ends at its own size (with keepVersionsMs 0 the fold
   * itself did that). Without a fold there is nothing to delete: appends and deletions only add
   * files, the next fold's cleanup reclaims what they supersede.
   */
  async close(): Promise<Readonly<WriterCounters>> {
    await this.flush();
    const made = this.options.foldAtClose ? await this.fold() : await this.makeSearchable();
    if (made === 'folded') await removeOldVersions(this.index, this.options.keepVersionsMs);
    return this.counters;
  }

  /**
   * A batch has waited batchDelayMs. While both batches in flight are still embedding or writing,
   * the input is ahead of the writer (a bulk run held back by ready()), not trickling in: the batch
   * goes on filling until a slot frees. Cut now, it was written as a trickle's, and a trickle is made
   * searchable within foldEveryMs: through a long run with vectors, a fold of the whole table about
   * every minute (15 in the bench corpus's last run, against 2 by foldEveryPages).
   */
  private batchTimeUp(): void {
    this.timer = undefined;
    if (this.inFlight < MAX_BATCHES_IN_FLIGHT) this.dispatch();
  }

  private dispatch(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.batch;
    this.batch = [];
    if (batch.length === 0) return;
    // A batch written before it filled means the pages trickle in: they should not wait for a count.
    const trickle = batch.length < this.options.batchPages;
    this.inFlight += 1;
    // Embedding of this batch overlaps with the writing of the previous one.
    const embedded = this.embedding.then(() => this.prepare(batch));
    this.embedding = embedded.catch(() => undefined);
    this.writing = Promise.all([this.writing, embedded])
      .then(([, prepared]) => this.write(prepared, trickle))
      .then(
        () => batch.forEach((entry) => entry.resolve()),
        (error: unknown) => {
          this.failure ??= error;
          batch.forEach((entry) => entry.reject(error));
        },
      )
      .finally(() => {
        this.inFlight -= 1;
        this.waiters.splice(0).forEach((wake) => wake());
        // A batch without a timer is one whose delay ran out while the slots were busy. Woken, a bulk
        // input fills it first; a trickle's is cut after one more delay.
        if (this.batch.length > 0) this.timer ??= setTimeout(() => this.batchTimeUp(), this.options.batchDelayMs);
      });
  }

  /**
   * The batch's pages that need writing (new, changed, or without current vectors), embedded, and
   * which of them replace a page already in.
   */
  private async prepare(batch: readonly Pending[]): Promise<Prepared> {
    if (this.failure) throw this.failure;
    // The last of two entries for one page wins, as a later line of a file should.
    const pages = [...new Map(batch.map(({ page }) => [page.canonicalUrl, page])).values()];
    const mayBeStored = pages.filter((page) => this.known.mayContain(page.canonicalUrl) || this.known.mayContain(page.url));
    const stored = new Map((await this.index.stored(mayBeStored.map((page) => page.canonicalUrl))).map((state) => [state.canonicalUrl, state]));
    for (const page of pages) {
      const appended = this.appendedSinceFold.get(page.canonicalUrl);
      if (appended) stored.set(page.canonicalUrl, appended);
    }
    const model = this.embedder?.model ?? null;
    const changed = pages.filter((page) => {
      const state = stored.get(page.canonicalUrl);
      return !state || state.contentHash !== page.contentHash || state.url !== page.url || (model !== null && state.vectorModel !== model);
    });
    this.counters.unchanged += batch.length - changed.length;
    const replacing = new Set(changed.filter((page) => stored.has(page.canonicalUrl)).map((page) => page.canonicalUrl));
    if (!this.embedder || changed.length === 0) return { pages: changed.map((page) => ({ ...page, vectors: null })), replacing };
    const started = performance.now();
    let embeddings: PageEmbedding[];
    try {
      embeddings = await this.embedder.embedPages(changed, this.signal);
    } catch (error) {
      // Interrupted (SIGINT): the batch is still written, without vectors, so the index holds every
      // page read; the next run finds them without vectors of the model and embeds them then.
      if (!this.signal?.aborted) throw error;
      return { pages: changed.map((page) => ({ ...page, vectors: null })), replacing };
    } finally {
      this.counters.embedMs += performance.now() - started;
    }
    return {
      pages: changed.map((page, i) => ({ ...page, vectors: { model: this.embedder!.model, ...embeddings[i]! } satisfies PageVectors })),
      replacing,
    };
  }

  private async write({ pages, replacing }: Prepared, trickle: boolean): Promise<void> {
    if (pages.length > 0) {
      await this.index.append(pages, replacing);
      this.counters.written += pages.length;
      this.counters.embedded += pages.filter((page) => page.vectors !== null).length;
      if (trickle) this.scheduleFold();
      for (const page of pages) {
        this.appendedSinceFold.set(page.canonicalUrl, {
          canonicalUrl: page.canonicalUrl,
          url: page.url,
          contentHash: page.contentHash,
          vectorModel: page.vectors?.model ?? null,
        });
      }
    }
    if (this.appendedSinceFold.size >= this.options.foldEveryPages) await this.fold();
    this.onProgress(this.counters);
  }

  /** A crawl's pages trickle in: they must not wait for foldEveryPages to become searchable. */
  private scheduleFold(): void {
    if (this.foldTimer !== undefined) return;
    this.foldTimer = setTimeout(() => {
      this.foldTimer = undefined;
      this.writing = this.writing.then(async () => void (await this.makeSearchable()));
    }, this.options.foldEveryMs);
    this.foldTimer.unref();
  }

  /** The index's makeSearchable(), counted as a fold when it folded. */
  private async makeSearchable(): Promise<'scanned' | 'folded'> {
    return this.folding(() => this.index.makeSearchable({ keepVersionsMs: this.options.keepVersionsMs }));
  }

  private async fold(): Promise<'folded'> {
    await this.folding(async () => {
      await this.index.fold({ keepVersionsMs: this.options.keepVersionsMs });
      return 'folded';
    });
    return 'folded';
  }

  private async folding(step: () => Promise<'scanned' | 'folded'>): Promise<'scanned' | 'folded'> {
    clearTimeout(this.foldTimer);
    this.foldTimer = undefined;
    const started = performance.now();
    const done = await step();
    if (done === 'scanned') return done;
    // Folded rows are in the B-trees now, where lookups find them cheaply: the filter says to look.
    for (const state of this.appendedSinceFold.values()) {
      this.known.add(state.canonicalUrl);
      this.known.add(state.url);
    }
    this.appendedSinceFold.clear();
    this.counters.foldMs += performance.now() - started;
    this.counters.folds += 1;
    this.onProgress(this.counters);
    return done;
  }
}
