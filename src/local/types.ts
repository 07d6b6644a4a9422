/**
 * The shapes shared by the embedded default's parts: the extractor turns fetched bytes into an
 * ExtractedPage, ingest and the crawler turn those into IndexedPages, and the index stores and
 * searches them. Each part lives in its own folder under src/local/.
 */

/**
 * The kind of page, which decides what its main content is: an article's body, every post of a
 * forum or Q&A thread, a product's description, specification and price, documentation with its
 * code and tables, a listing's items. "other" for pages that are none of these (a service's
 * home page, a contact page).
 */
export type PageType = 'article' | 'forum' | 'product' | 'documentation' | 'listing' | 'other';

/** What the extractor makes of one page. */
export interface ExtractedPage {
  /** Best title: JSON-LD headline/name, then og:title, then <title>/<h1>. */
  title: string | null;
  /** The author's name as structured data or meta tags give it; null when the page names none. */
  author: string | null;
  /** Main text with boilerplate removed; paragraphs separated by blank lines. Empty when none. */
  text: string;
  /** ISO 8601 UTC, from JSON-LD, article/OpenGraph meta, <time>, then URL patterns, in that order of trust. */
  datePublished: string | null;
  /** BCP 47 tag from <html lang>, content-language or detection; null when unknown. */
  language: string | null;
  /** <link rel=canonical> resolved against the page URL, or null. */
  canonicalUrl: string | null;
  /** True for interstitials ("Just a moment…", CAPTCHA walls): never stored or returned as text. */
  isChallenge: boolean;
  /** Detected from structured data and the page's structure; null for PDF and plain text. */
  pageType: PageType | null;
  /** The main content as markdown (headings, lists, tables, code), when it was asked for. */
  markdown?: string;
}

/** One document of the local index. */
export interface IndexedPage {
  url: string;
  /** The canonical URL when the page declares one, else the normalized url; the index's identity. */
  canonicalUrl: string;
  title: string;
  text: string;
  datePublished: string | null;
  /** Lower-case host without "www.". */
  domain: string;
  language: string | null;
  /** ISO 8601 UTC. */
  fetchedAt: string;
  /** SHA-256 hex of the normalized main text: content-hash dedupe. */
  contentHash: string;
  /**
   * The main text as markdown, for a page extracted from HTML (crawled, a WARC, a JSONL line's
   * html) or given as `markdown` in a JSONL line; absent for pages given as text alone.
   */
  markdown?: string | null;
}

export interface IndexQuery {
  query: string;
  limit: number;
  offset: number;
  /** Normalized domains (lower case, no "www."); a domain matches itself and its subdomains. */
  includeDomains: string[];
  excludeDomains: string[];
  /** Half-open [fromMs, toMs) on datePublished; pages without a date never match a window. */
  window: { fromMs: number; toMs: number } | null;
  /**
   * 'any' (default): BM25 over pages holding any of the words, so pages with more of them rank
   * first and a long query still finds something. 'all': only pages holding every word (in the
   * title or in the text).
   */
  match?: 'all' | 'any';
  /** false: hits come without snippets, for a caller that picks among them first (hybrid search). */
  snippets?: boolean;
}

/**
 * A page's embedding: one unit vector per window of its title and text (the first window first),
 * its title's own vector, and the stamp of the model and windowing that made them. A vector is only
 * compared with a query embedded by a model that reads that stamp (QueryEmbedder.reads).
 */
export interface PageVectors {
  model: string;
  windows: Float32Array[];
  /** The title embedded alone; null for a page without a title, or one embedded before titles were. */
  title: Float32Array | null;
}

/** A page as the index writes it: the page, and its vectors when an embedder made them. */
export interface EmbeddedPage extends IndexedPage {
  vectors: PageVectors | null;
}

export interface IndexHit {
  page: IndexedPage;
  /** The leg's own score: BM25 for full text, cosine similarity for vectors. */
  score: number;
  /** Query-biased: the passage that best matches the query terms. */
  snippet: string;
  /** The page's stored vectors, when the index holds vectors and the search asked for them. */
  vectors?: PageVectors | null;
}

export interface IndexStats {
  documents: number;
  domains: number;
  bytesOnDisk: number;
  /** The tables the pages are kept in (LocalIndexOptions.shardRows): a fold rewrites the newest alone. */
  shards: number;
  lastUpdated: string | null;
  /** Pages stored with vectors, by the stamp of the model that made them. */
  vectors: Record<string, number>;
}

/** What the index already holds of a page, for a writer deciding whether to write it again. */
export interface StoredPageState {
  canonicalUrl: string;
  url: string;
  contentHash: string;
  /** The stamp of its vectors, or null when it has none. */
  vectorModel: string | null;
}

export interface LocalIndex {
  /**
   * Adds or replaces pages by canonicalUrl and makes them searchable before it resolves, by a fold
   * of its own: for tests and one-off writes. The gateway and the CLI write through an IndexWriter
   * (writer.ts), which appends and folds on its own schedule.
   */
  upsert(pages: Array<IndexedPage | EmbeddedPage>): Promise<void>;
  /**
   * Appends pages as rows, replacing earlier rows of the same pages once written; they become
   * searchable at the next makeSearchable() or fold(). The cheap step of bulk writes: its cost does not grow with the
   * index. A writer that knows which pages are new passes the canonical URLs of those `replacing`
   * rows: only their older rows are looked for and deleted.
   */
  append(pages: ReadonlyArray<IndexedPage | EmbeddedPage>, replacing?: ReadonlySet<string>): Promise<void>;
  /**
   * Folds the rows appended since the last fold into the full-text, scalar and vector indexes,
   * compacts small fragments and deletes versions older than keepVersionsMs. Its cost grows with the
   * shard being written (up to LocalIndexOptions.shardRows pages), so writers call it once per run
   * or per many thousand rows. `keepVersionsMs` overrides how long superseded versions are kept (0:
   * only the current one).
   */
  fold(options?: { keepVersionsMs?: number }): Promise<void>;
  /**
   * Makes the rows appended so far searchable: while the unindexed rows are few enough for searches
   * to scan (LocalIndexOptions.maxUnindexedRows), by deleting the rows they supersede and leaving
   * the data files as they are; past that, by a fold. Says which it did.
   */
  makeSearchable(options?: { keepVersionsMs?: number }): Promise<'scanned' | 'folded'>;
  /** Rows not yet in the full-text index (appended since the last fold). */
  unindexedRows(): Promise<number>;
  /** What the index holds of these pages (by url or canonicalUrl), for skipping what is already in. */
  stored(urls: readonly string[]): Promise<StoredPageState[]>;
  /** Every URL and canonical URL the index holds (a page's two may be one), in batches: cheap, no text read. */
  storedUrls(): AsyncIterable<string[]>;
  /** The width of the stored vectors, or null for an index that holds none (built before vectors). */
  readonly vectorDimensions: number | null;
  /** vectorDimensions as the table has them now, re-read at most every few seconds (another process may have added vectors). */
  refreshVectorDimensions(): Promise<number | null>;
  /**
   * Gives the index vector columns of this width: an index built before vectors gains them, one of
   * another width (a model change) has them replaced. Rows have no vectors until written again.
   */
  ensureVectorColumns(dimensions: number): Promise<void>;
  /**
   * Pages closest to `vector` (cosine) among those whose vectors one of `models` made (the stamps a
   * query's model reads), with the query's filters; [] for an index without vectors.
   */
  vectorSearch(query: IndexQuery & { vector: Float32Array; models: readonly string[] }): Promise<IndexHit[]>;
  /** Removes pages by url or canonicalUrl; returns how many were removed. */
  remove(urls: string[]): Promise<number>;
  /** Full-text (BM25) search; `withVectors` also returns each hit's stored vectors. */
  search(query: IndexQuery & { withVectors?: boolean }): Promise<{ hits: IndexHit[]; total: number | null }>;
  get(url: string): Promise<IndexedPage | null>;
  /** The query-biased snippet of a page's text, as hits carry. */
  snippet(text: string, query: string): string;
  stats(): Promise<IndexStats>;
  export(): AsyncIterable<IndexedPage>;
  /** A read-only copy (a replica's mirror of an index on object storage): every write throws. */
  readonly readOnly: boolean;
  close(): Promise<void>;
}
