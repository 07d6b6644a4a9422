/**
 * A crawl's memory, kept on disk so that an interrupted `index add` continues where it stopped: the
 * URLs queued, the URLs finished, and the content hashes stored. It is a JSON-lines log, appended as
 * the crawl goes (a crash loses at most the lines not yet flushed, which only means refetching pages
 * that were never stored), and rewritten without the redundant lines now and then.
 *
 * Lines: {"q":url,"d":depth,"k":"p"|"s","s":site} queued; {"x":url,"f":1} finished ("f": it was a
 * page fetch, counted against maxPages); {"h":hash} a content hash stored.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export type ItemKind = 'page' | 'sitemap';

export interface FrontierItem {
  /** Normalized. */
  url: string;
  /** Links followed from a seed to get here; seeds and sitemap entries are 0. */
  depth: number;
  kind: ItemKind;
  /** The seed's host without "www.": the crawl stays within it and its subdomains. */
  site: string;
}

/** Rewrite once this many lines are no longer needed (the queued lines of finished URLs). */
const COMPACT_AFTER_REDUNDANT_LINES = 5_000;

export class CrawlState {
  private readonly queued = new Map<string, FrontierItem>();
  private readonly finished = new Set<string>();
  private readonly contentHashes = new Set<string>();
  /** Finished URLs that were page fetches: what maxPages counts, earlier runs included. */
  private readonly fetchedPages = new Set<string>();
  private unflushed: string[] = [];
  private redundantLines = 0;

  private constructor(private readonly path: string | null) {}

  /** Opens the state at `path` (continuing it when it exists), or an in-memory state when null. */
  static open(path: string | null): CrawlState {
    const state = new CrawlState(path);
    if (path && existsSync(path)) state.replay(readFileSync(path, 'utf8'));
    return state;
  }

  get pagesFetched(): number {
    return this.fetchedPages.size;
  }

  /** True when the file held an unfinished crawl. */
  get resumed(): boolean {
    return this.finished.size > 0 || this.queued.size > 0;
  }

  /** Queued but not finished, in the order they were queued. */
  pending(): FrontierItem[] {
    return [...this.queued.values()].filter((item) => !this.finished.has(item.url));
  }

  has(url: string): boolean {
    return this.queued.has(url) || this.finished.has(url);
  }

  isFinished(url: string): boolean {
    return this.finished.has(url);
  }

  /** Queues an item unless its URL was seen before; true when queued. */
  add(item: FrontierItem): boolean {
    if (this.has(item.url)) return false;
    this.queued.set(item.url, item);
    this.unflushed.push(JSON.stringify({ q: item.url, d: item.depth, k: item.kind === 'page' ? 'p' : 's', s: item.site }));
    return true;
  }

  hasContentHash(hash: string): boolean {
    return this.contentHashes.has(hash);
  }

  /** Claims a content hash before the page is stored, so that two pages in flight cannot both store it. */
  claimContentHash(hash: string): void {
    this.contentHashes.add(hash);
  }

  /**
   * Marks URLs finished and writes everything pending to disk, queued links first: a URL is on disk
   * as finished only once what it led to is too.
   */
  finish(urls: string[], options: { pageFetch: boolean; storedHash?: string }): void {
    if (options.storedHash) this.unflushed.push(JSON.stringify({ h: options.storedHash }));
    urls.forEach((url, position) => {
      if (this.finished.has(url)) return;
      this.finished.add(url);
      // Only the URL that was requested counts; the others are where its redirects led.
      const countsAsFetch = options.pageFetch && position === 0;
      if (countsAsFetch) this.fetchedPages.add(url);
      if (this.queued.has(url)) this.redundantLines += 1;
      this.unflushed.push(JSON.stringify(countsAsFetch ? { x: url, f: 1 } : { x: url }));
    });
    this.flush();
    if (this.redundantLines > COMPACT_AFTER_REDUNDANT_LINES) this.compact();
  }

  flush(): void {
    if (!this.path || this.unflushed.length === 0) return;
    mkdirSync(dirname(this.path), { recursive: true });
    appendFileSync(this.path, `${this.unflushed.join('\n')}\n`);
    this.unflushed = [];
  }

  /** A crawl that ran to its end leaves no state behind: the next `index add` starts afresh. */
  discard(): void {
    this.unflushed = [];
    if (this.path) rmSync(this.path, { force: true });
  }

  /** Rewrites the file with only the lines still needed; written aside, then renamed over. */
  compact(): void {
    if (!this.path) return;
    this.unflushed = [];
    const lines: string[] = [];
    for (const hash of this.contentHashes) lines.push(JSON.stringify({ h: hash }));
    // pagesFetched is carried by the "f" marks, so those are kept on finished page URLs.
    for (const url of this.finished) lines.push(JSON.stringify(this.fetchedPages.has(url) ? { x: url, f: 1 } : { x: url }));
    for (const item of this.pending()) {
      lines.push(JSON.stringify({ q: item.url, d: item.depth, k: item.kind === 'page' ? 'p' : 's', s: item.site }));
    }
    const temporary = `${this.path}.tmp`;
    mkdirSync(dirname(this.path), { recursive: true });
    writeFileSync(temporary, lines.length ? `${lines.join('\n')}\n` : '');
    renameSync(temporary, this.path);
    this.redundantLines = 0;
  }

  private replay(log: string): void {
    for (const line of log.split('\n')) {
      if (line.trim() === '') continue;
      let entry: { q?: string; d?: number; k?: string; s?: string; x?: string; f?: number; h?: string };
      try {
        entry = JSON.parse(line);
      } catch {
        // The last line of a crash can be cut short; nothing after it was written.
        continue;
      }
      if (entry.q !== undefined) {
        this.queued.set(entry.q, { url: entry.q, depth: entry.d ?? 0, kind: entry.k === 's' ? 'sitemap' : 'page', site: entry.s ?? '' });
      } else if (entry.x !== undefined) {
        this.finished.add(entry.x);
        if (entry.f === 1) this.fetchedPages.add(entry.x);
      } else if (entry.h !== undefined) {
        this.contentHashes.add(entry.h);
      }
    }
  }
}
