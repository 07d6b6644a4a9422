/**
 * The shapes shared by the embedded default's parts: the extractor turns fetched bytes into an
 * ExtractedPage, ingest and the crawler turn those into IndexedPages, and the index stores and
 * searches them. Each part lives in its own folder under src/local/.
 */

/** What the extractor makes of one page. */
export interface ExtractedPage {
  /** Best title: JSON-LD headline/name, then og:title, then <title>/<h1>. */
  title: string | null;
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
}

export interface IndexHit {
  page: IndexedPage;
  score: number;
  /** Query-biased: the passage that best matches the query terms. */
  snippet: string;
}

export interface IndexStats {
  documents: number;
  domains: number;
  bytesOnDisk: number;
  lastUpdated: string | null;
}

export interface LocalIndex {
  /** Adds or replaces pages by canonicalUrl; incremental, no full rebuild. */
  upsert(pages: IndexedPage[]): Promise<void>;
  /** Removes pages by url or canonicalUrl; returns how many were removed. */
  remove(urls: string[]): Promise<number>;
  search(query: IndexQuery): Promise<{ hits: IndexHit[]; total: number | null }>;
  get(url: string): Promise<IndexedPage | null>;
  stats(): Promise<IndexStats>;
  export(): AsyncIterable<IndexedPage>;
  close(): Promise<void>;
}
