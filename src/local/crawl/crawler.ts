/**
 * The crawler: from seed URLs and sitemaps, over links, within the seeds' sites, politely, into a
 * sink. Politeness is per origin: at most `perHostConcurrency` requests at once and at least
 * `minDelayMs` (or the site's Crawl-delay, if longer) between the starts of two requests.
 */
import { decodeBytes, documentKind } from '../extract/index.js';
import {
  FetchError,
  hostWithoutWww,
  isWithinSite,
  normalizeHttpUrl,
  normalizeUrl,
  safeFetch,
} from '../fetch/index.js';
import type { FetchPolicy, FetchedResource } from '../fetch/index.js';
import { FOR_THE_INDEX, extractorOrDefault } from '../ingest/extractor.js';
import type { PageExtractor } from '../ingest/extractor.js';
import { toIndexedPage } from '../ingest/indexed-page.js';
import type { ExtractedPage, IndexedPage } from '../types.js';
import { readPageDirectives } from './links.js';
import type { PageDirectives } from './links.js';
import { SILENT_PROGRESS } from './progress.js';
import type { CrawlCounters, CrawlProgress, PageOutcome } from './progress.js';
import { loadRobots } from './robots.js';
import type { RobotsRules } from './robots.js';
import { readSitemap } from './sitemap.js';
import { CrawlState } from './state.js';
import type { FrontierItem } from './state.js';

export interface CrawlSeed {
  url: string;
  kind: 'page' | 'sitemap';
}

export type PageSink = (page: IndexedPage) => Promise<void>;

export interface CrawlOptions {
  seeds: CrawlSeed[];
  fetchPolicy: FetchPolicy;
  /** Page fetches over the whole crawl, resumed runs included; robots.txt and sitemaps do not count. */
  maxPages?: number;
  /** Links followed from a seed; 0 fetches the seeds (and sitemap entries) only. */
  maxDepth?: number;
  perHostConcurrency?: number;
  /** Between the starts of two requests to one origin. */
  minDelayMs?: number;
  /** Requests at once across all origins. */
  maxConcurrency?: number;
  /** A Crawl-delay longer than this is read as this: a typo of 3600 should not stall a crawl for hours. */
  maxCrawlDelayMs?: number;
  /** Where the crawl's frontier is kept so that a later run continues it; in memory only when absent. */
  statePath?: string | null;
  progress?: CrawlProgress;
  signal?: AbortSignal;
  /** An ExtractorPool, say; the extractor on the calling thread when absent. */
  extractor?: PageExtractor;
}

export interface CrawlSummary extends CrawlCounters {
  /** False when the crawl was interrupted (its signal aborted): its state is kept for the next run. */
  complete: boolean;
  /** True when this run continued an interrupted crawl. */
  resumed: boolean;
}

export const CRAWL_DEFAULTS = {
  maxPages: 1_000,
  maxDepth: 3,
  perHostConcurrency: 2,
  minDelayMs: 1_000,
  maxConcurrency: 8,
  maxCrawlDelayMs: 30_000,
} as const;

const SITEMAP_ACCEPT = 'application/xml,text/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5';

/** An origin's share of the crawl: its queue, its robots.txt, and when it may next be asked. */
interface Origin {
  origin: string;
  queue: FrontierItem[];
  inFlight: number;
  /** performance.now() before which no request may start. */
  nextStartAt: number;
  robots?: RobotsRules;
  robotsLoading?: Promise<RobotsRules>;
}

/** A sink failure (the index cannot be written) ends the crawl instead of being counted per page. */
class SinkFailure extends Error {}

export async function crawl(options: CrawlOptions, sink: PageSink): Promise<CrawlSummary> {
  return new Crawl(options, sink).run();
}

class Crawl {
  private readonly settings: Required<Omit<CrawlOptions, 'statePath' | 'signal' | 'seeds' | 'extractor'>>;
  private readonly extractor: Promise<PageExtractor>;
  private readonly state: CrawlState;
  private readonly origins = new Map<string, Origin>();
  private readonly running = new Set<Promise<void>>();
  private readonly controller = new AbortController();
  private readonly counters: CrawlCounters = { fetched: 0, stored: 0, duplicates: 0, challenges: 0, skipped: 0, blocked: 0, errors: 0, queued: 0 };
  private pageFetchesInFlight = 0;
  private fatal: unknown = null;
  private wake: () => void = () => {};

  constructor(
    private readonly options: CrawlOptions,
    private readonly sink: PageSink,
  ) {
    this.settings = {
      fetchPolicy: options.fetchPolicy,
      maxPages: options.maxPages ?? CRAWL_DEFAULTS.maxPages,
      maxDepth: options.maxDepth ?? CRAWL_DEFAULTS.maxDepth,
      perHostConcurrency: Math.max(1, options.perHostConcurrency ?? CRAWL_DEFAULTS.perHostConcurrency),
      minDelayMs: Math.max(0, options.minDelayMs ?? CRAWL_DEFAULTS.minDelayMs),
      maxConcurrency: Math.max(1, options.maxConcurrency ?? CRAWL_DEFAULTS.maxConcurrency),
      maxCrawlDelayMs: options.maxCrawlDelayMs ?? CRAWL_DEFAULTS.maxCrawlDelayMs,
      progress: options.progress ?? SILENT_PROGRESS,
    };
    this.state = CrawlState.open(options.statePath ?? null);
    this.extractor = extractorOrDefault(options.extractor);
    // Surfaced where it is awaited; unobserved until then.
    this.extractor.catch(() => {});
  }

  private get signal(): AbortSignal {
    return this.controller.signal;
  }

  async run(): Promise<CrawlSummary> {
    const external = this.options.signal;
    const onAbort = () => this.controller.abort(external?.reason);
    if (external?.aborted) onAbort();
    external?.addEventListener('abort', onAbort, { once: true });
    const resumed = this.state.resumed;
    try {
      if (resumed) {
        this.settings.progress.notice(`resuming an interrupted crawl: ${this.state.pagesFetched} pages already fetched`);
      }
      for (const item of this.state.pending()) this.schedule(item);
      for (const seed of this.options.seeds) this.addSeed(seed);
      this.state.flush();
      await this.loop();
    } finally {
      external?.removeEventListener('abort', onAbort);
    }
    if (this.fatal) {
      this.state.flush();
      throw this.fatal;
    }
    const complete = !this.signal.aborted;
    if (complete) this.state.discard();
    else this.state.compact();
    this.counters.queued = this.queuedCount();
    this.settings.progress.finish({ ...this.counters }, complete);
    return { ...this.counters, complete, resumed };
  }

  private addSeed(seed: CrawlSeed): void {
    const url = normalizeHttpUrl(seed.url);
    if (!url) {
      this.report(seed.url, 'error', 'not an http(s) URL');
      return;
    }
    this.enqueue({ url, depth: 0, kind: seed.kind, site: hostWithoutWww(new URL(url).hostname) });
  }

  private enqueue(item: FrontierItem): void {
    if (this.state.add(item)) this.schedule(item);
  }

  private schedule(item: FrontierItem): void {
    this.originOf(item.url).queue.push(item);
  }

  private originOf(url: string): Origin {
    const key = new URL(url).origin;
    let origin = this.origins.get(key);
    if (!origin) {
      origin = { origin: key, queue: [], inFlight: 0, nextStartAt: 0 };
      this.origins.set(key, origin);
    }
    return origin;
  }

  /** Starts whatever may start, then sleeps until a request ends or an origin's delay runs out. */
  private async loop(): Promise<void> {
    while (!this.signal.aborted) {
      const nextStartAt = this.dispatch();
      if (this.running.size === 0 && nextStartAt === null) break;
      await this.sleep(nextStartAt);
    }
    await Promise.allSettled([...this.running]);
  }

  /** Until `until` (performance.now() time; null: no limit), a request ends, or the crawl is stopped. */
  private sleep(until: number | null): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        // The timer goes too: a pending Crawl-delay must not keep a stopped process alive.
        clearTimeout(timer);
        this.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = until === null ? undefined : setTimeout(done, Math.max(0, until - performance.now()));
      this.signal.addEventListener('abort', done, { once: true });
      this.wake = done;
    });
  }

  /** Returns when the next request held back only by a delay may start, or null when none is. */
  private dispatch(): number | null {
    let nextStartAt: number | null = null;
    const budgetLeft = () => this.state.pagesFetched + this.pageFetchesInFlight < this.settings.maxPages;
    for (const origin of this.origins.values()) {
      while (origin.queue.length > 0 && budgetLeft()) {
        if (this.running.size >= this.settings.maxConcurrency) return nextStartAt;
        if (!origin.robots) {
          // robots.txt is the first request to an origin, and counts for its politeness like any other.
          if (origin.robotsLoading) break;
          if (performance.now() < origin.nextStartAt) {
            nextStartAt = Math.min(nextStartAt ?? Infinity, origin.nextStartAt);
            break;
          }
          // It can only fail when the crawl is being stopped; that is no failure of the crawl.
          this.start(origin, () => this.robotsFor(origin.origin).then(() => {}, () => {}));
          break;
        }
        const item = origin.queue[0]!;
        if (this.state.isFinished(item.url)) {
          // Reached meanwhile as the target of another URL's redirect.
          origin.queue.shift();
          continue;
        }
        if (!origin.robots.isAllowed(item.url)) {
          origin.queue.shift();
          this.state.finish([item.url], { pageFetch: false });
          this.report(item.url, 'blocked', 'robots.txt');
          continue;
        }
        if (origin.inFlight >= this.concurrencyOf(origin)) break;
        if (performance.now() < origin.nextStartAt) {
          nextStartAt = Math.min(nextStartAt ?? Infinity, origin.nextStartAt);
          break;
        }
        origin.queue.shift();
        if (item.kind === 'page') this.pageFetchesInFlight += 1;
        this.start(origin, () => this.process(item));
      }
    }
    return nextStartAt;
  }

  private concurrencyOf(origin: Origin): number {
    // Crawl-delay means one request at a time, spaced by the delay.
    return origin.robots?.crawlDelayMs ? 1 : this.settings.perHostConcurrency;
  }

  private delayOf(origin: Origin): number {
    const crawlDelay = Math.min(origin.robots?.crawlDelayMs ?? 0, this.settings.maxCrawlDelayMs);
    return Math.max(this.settings.minDelayMs, crawlDelay);
  }

  private start(origin: Origin, work: () => Promise<void>): void {
    origin.inFlight += 1;
    origin.nextStartAt = performance.now() + this.delayOf(origin);
    const task: Promise<void> = work()
      .catch((error: unknown) => {
        // Only a sink failure gets here; the crawl stops and keeps its state for the next run.
        this.fatal ??= error;
        this.controller.abort(error);
      })
      .finally(() => {
        origin.inFlight -= 1;
        this.running.delete(task);
        this.wake();
      });
    this.running.add(task);
  }

  private robotsFor(originKey: string): Promise<RobotsRules> {
    const origin = this.originOf(originKey);
    if (origin.robots) return Promise.resolve(origin.robots);
    origin.robotsLoading ??= loadRobots(originKey, (url, signal) => safeFetch(url, this.settings.fetchPolicy, signal, { accept: 'text/plain' }), this.signal)
      .then((rules) => {
        origin.robots = rules;
        // Its delay starts now: an origin with a Crawl-delay waits it out after robots.txt too.
        origin.nextStartAt = Math.max(origin.nextStartAt, performance.now() + this.delayOf(origin));
        if (rules.source !== 'robots.txt' || rules.crawlDelayMs) {
          this.settings.progress.notice(`${originKey}: ${rules.source}${rules.crawlDelayMs ? `, Crawl-delay ${rules.crawlDelayMs / 1000} s` : ''}`);
        }
        return rules;
      })
      .finally(() => {
        origin.robotsLoading = undefined;
        this.wake();
      });
    return origin.robotsLoading;
  }

  private async process(item: FrontierItem): Promise<void> {
    try {
      if (item.kind === 'sitemap') await this.processSitemap(item);
      else await this.processPage(item);
    } catch (error) {
      if (error instanceof SinkFailure) throw error.cause;
      // Interrupted: the item stays queued for the next run.
      if (this.signal.aborted) return;
      this.state.finish([item.url], { pageFetch: item.kind === 'page' });
      this.report(item.url, 'error', error instanceof FetchError ? error.message : String((error as Error)?.message ?? error), item.kind === 'page');
    } finally {
      if (item.kind === 'page') this.pageFetchesInFlight -= 1;
    }
  }

  private fetch(item: FrontierItem, accept?: string): Promise<FetchedResource> {
    return safeFetch(item.url, this.settings.fetchPolicy, this.signal, {
      accept,
      // A redirect may leave the site or land where robots.txt says no: both end the fetch. (A new
      // origin's robots.txt is fetched right here, outside its politeness schedule: one request.)
      followRedirect: async (to) =>
        isWithinSite(new URL(to).hostname, item.site) && (await this.robotsFor(new URL(to).origin)).isAllowed(to),
    });
  }

  private async processSitemap(item: FrontierItem): Promise<void> {
    const resource = await this.fetch(item, SITEMAP_ACCEPT);
    if (resource.status !== 200) throw new Error(`sitemap answered HTTP ${resource.status}`);
    const entries = await readSitemap(resource.body, resource.url, this.signal);
    const inSite = (url: string) => isWithinSite(new URL(url).hostname, item.site);
    for (const url of entries.sitemaps.filter(inSite)) this.enqueue({ url, depth: 0, kind: 'sitemap', site: item.site });
    for (const url of entries.pages.filter(inSite)) this.enqueue({ url, depth: 0, kind: 'page', site: item.site });
    this.state.finish([item.url], { pageFetch: false });
    this.settings.progress.notice(`sitemap ${item.url}: ${entries.pages.length} pages, ${entries.sitemaps.length} sitemaps`);
  }

  private async processPage(item: FrontierItem): Promise<void> {
    const resource = await this.fetch(item);
    const finalUrl = normalizeUrl(resource.url);
    const reached = finalUrl === item.url ? [item.url] : [item.url, finalUrl];
    const finish = (outcome: PageOutcome, detail?: string, storedHash?: string) => {
      this.state.finish(reached, { pageFetch: true, storedHash });
      this.report(item.url, outcome, detail, true);
    };
    if (finalUrl !== item.url && this.state.isFinished(finalUrl)) return finish('duplicate', `redirects to ${finalUrl}, already crawled`);
    if (resource.status !== 200) return finish('error', `HTTP ${resource.status}`);

    const kind = documentKind(resource.body, resource.contentType);
    if (kind === 'unsupported') return finish('skipped', `not a document (${resource.contentType ?? 'no content type'})`);
    let extracted: ExtractedPage;
    let directives: PageDirectives;
    if (kind === 'html') {
      // Decoded here rather than inside the extractor because the links are read from the same text.
      const html = decodeBytes(resource.body, resource.contentType, { html: true });
      directives = readPageDirectives(html, finalUrl, resource.headers['x-robots-tag']);
      extracted = await (await this.extractor).extractHtml(html, finalUrl, FOR_THE_INDEX);
    } else {
      directives = readPageDirectives('', finalUrl, resource.headers['x-robots-tag']);
      extracted = await (await this.extractor).extract(resource.body, { url: finalUrl, contentType: resource.contentType }, FOR_THE_INDEX);
    }

    if (extracted.isChallenge) return finish('challenge');
    // Links are queued before the page is marked finished, so a crash in between loses nothing.
    if (item.depth < this.settings.maxDepth) {
      for (const link of directives.links) {
        if (isWithinSite(new URL(link).hostname, item.site)) this.enqueue({ url: link, depth: item.depth + 1, kind: 'page', site: item.site });
      }
    }
    if (directives.noindex) return finish('skipped', 'noindex');
    const page = toIndexedPage(extracted, { url: finalUrl, fetchedAt: new Date().toISOString() });
    if (!page) return finish('skipped', 'no text');
    if (this.state.hasContentHash(page.contentHash)) return finish('duplicate', 'same text as a page already stored');
    this.state.claimContentHash(page.contentHash);
    try {
      await this.sink(page);
    } catch (error) {
      throw new SinkFailure('the index could not store a page', { cause: error });
    }
    finish('stored', page.canonicalUrl !== finalUrl ? `as ${page.canonicalUrl}` : undefined, page.contentHash);
  }

  private report(url: string, outcome: PageOutcome, detail: string | undefined, pageFetch = false): void {
    if (pageFetch) this.counters.fetched += 1;
    const counter = ({ stored: 'stored', duplicate: 'duplicates', challenge: 'challenges', skipped: 'skipped', blocked: 'blocked', error: 'errors' } as const)[outcome];
    this.counters[counter] += 1;
    this.counters.queued = this.queuedCount();
    this.settings.progress.page(url, outcome, detail, { ...this.counters });
  }

  private queuedCount(): number {
    let queued = 0;
    for (const origin of this.origins.values()) queued += origin.queue.length;
    return queued;
  }
}
