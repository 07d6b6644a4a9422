/**
 * How a crawl reports itself: on a terminal, one status line redrawn in place (pages done, rate,
 * errors, queue); anywhere else (a log file, CI), one plain line per page, which greps well.
 */
import type { Writable } from 'node:stream';
import { StatusLine } from '../../util/status-line.js';

export type PageOutcome =
  /** Stored in the index. */
  | 'stored'
  /** Same text as a page already stored, or reached before under another URL. */
  | 'duplicate'
  /** A bot-check interstitial: never stored. */
  | 'challenge'
  /** Fetched, but nothing to store (noindex, not HTML or PDF, no text). */
  | 'skipped'
  /** Not fetched: robots.txt disallows it. */
  | 'blocked'
  | 'error';

export interface CrawlCounters {
  /** Page fetches finished in this run (robots.txt and sitemaps not counted). */
  fetched: number;
  stored: number;
  duplicates: number;
  challenges: number;
  skipped: number;
  blocked: number;
  errors: number;
  /** URLs waiting. */
  queued: number;
}

export interface CrawlProgress {
  page(url: string, outcome: PageOutcome, detail: string | undefined, counters: CrawlCounters): void;
  /** Something worth a line of its own: robots.txt rules, a resumed crawl, a sitemap read. */
  notice(message: string): void;
  finish(counters: CrawlCounters, complete: boolean): void;
}

export const SILENT_PROGRESS: CrawlProgress = { page() {}, notice() {}, finish() {} };

export function createProgress(stream: Writable & { isTTY?: boolean }, options: { tty?: boolean } = {}): CrawlProgress {
  const tty = options.tty ?? Boolean(stream.isTTY);
  const started = performance.now();
  const rate = (counters: CrawlCounters) => counters.fetched / Math.max((performance.now() - started) / 1000, 0.001);
  const status = (counters: CrawlCounters) =>
    `crawl: ${counters.fetched} pages, ${rate(counters).toFixed(1)} pages/s, ${counters.stored} stored, ` +
    `${counters.duplicates} duplicates, ${counters.errors} errors, ${counters.queued} queued`;

  if (!tty) {
    return {
      page: (url, outcome, detail) => stream.write(`${outcome} ${url}${detail ? ` (${detail})` : ''}\n`),
      notice: (message) => stream.write(`${message}\n`),
      finish: (counters, complete) => stream.write(`${status(counters)}${complete ? '' : ' (interrupted: run again to continue)'}\n`),
    };
  }

  const line = new StatusLine(stream);
  let latest: CrawlCounters | null = null;
  return {
    page(url, outcome, detail, counters) {
      latest = counters;
      // Errors scroll up as lines of their own; everything else only moves the counters.
      if (outcome === 'error') {
        line.clear();
        stream.write(`error ${url}${detail ? ` (${detail})` : ''}\n`);
        line.draw(status(counters), true);
      } else {
        line.draw(status(counters));
      }
    },
    notice(message) {
      line.clear();
      stream.write(`${message}\n`);
      if (latest) line.draw(status(latest), true);
    },
    finish(counters, complete) {
      line.finish(status(counters), complete ? '' : ' (interrupted: run again to continue)');
    },
  };
}
