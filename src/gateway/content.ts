/**
 * Page text through the content chain, within a time budget: for search results whose provider gave
 * none (a page that cannot be had in time keeps its result, without text; spec §2.2 allows that),
 * and page by page for the content operation of the dialects (Tavily extract, Exa contents), which
 * reports for each URL its text or why there is none.
 */
import type { Logger } from '../server/logger.js';
import { isPageFailure, type ContentProvider, type PageContent, type PageFailure, type ProviderSearchResult } from '../providers/types.js';
import { signalWithTimeout } from '../util/timeout.js';
import type { Deadline } from './deadline.js';
import type { UpstreamCaller } from './upstream.js';

export interface ContentTuning {
  timeBudgetMs: number;
  concurrency: number;
}

/** One requested page: its text, or why there is none. */
export type PageResult = { url: string; page: PageContent; provider: string } | ({ url: string } & PageFailure);

/** Page text for given URLs (Tavily extract, Exa contents): each URL through the content chain. */
export interface ContentRequest {
  urls: string[];
  /** Per-page cap, in Unicode code points. */
  maxCharacters: number;
  /** How long the client is willing to wait for the pages, at most content.timeBudgetMs. */
  timeBudgetMs: number | null;
}

export interface ContentOutcome {
  provider: string;
  /** One per requested URL, in request order. */
  pages: PageResult[];
}

const HTTP_URL = /^https?:\/\/[^\s/]/i;

export class ContentFiller {
  constructor(
    readonly chain: readonly ContentProvider[],
    private readonly tuning: ContentTuning,
    private readonly upstream: UpstreamCaller,
    private readonly logger: Logger,
  ) {}

  /**
   * Text for the results that have none; with `markdown`, markdown for every result too, since an
   * upstream's own text is plain. A result whose page has no markdown keeps its plain text.
   */
  async fill(results: ProviderSearchResult[], maxCharacters: number, deadline: Deadline, markdown = false): Promise<void> {
    const missing = results.filter((result) => !result.text || (markdown && !result.markdown));
    if (missing.length === 0 || this.chain.length === 0) return;
    // Leave a little of the deadline for building the response.
    const budgetMs = Math.min(this.tuning.timeBudgetMs, Math.max(0, deadline.remainingMs() - 50));
    await this.withinBudget(missing, budgetMs, deadline.signal, async (result, signal) => {
      const fetched = await this.fetchPage(result.url, maxCharacters, signal, markdown);
      if (!('page' in fetched)) return;
      result.text ||= fetched.page.text;
      if (fetched.page.markdown) result.markdown = fetched.page.markdown;
    });
  }

  /**
   * Each URL's page, `concurrency` at a time and at most `budgetMs` in all; a URL not done by then
   * is a `timeout`. `load` fetches one page (fetchPage, or a cache in front of it). Results are in
   * the order of `urls`.
   */
  async pages(
    urls: readonly string[],
    budgetMs: number,
    signal: AbortSignal,
    load: (url: string, signal: AbortSignal) => Promise<PageResult>,
  ): Promise<PageResult[]> {
    const results: PageResult[] = urls.map((url) => ({ url, failure: 'timeout' }));
    await this.withinBudget(
      urls.map((url, i) => ({ url, i })),
      budgetMs,
      signal,
      async ({ url, i }, budget) => {
        results[i] = await load(url, budget);
      },
    );
    return results;
  }

  /**
   * Runs `work` over `items`, `concurrency` at a time, until every item is done or the budget is
   * spent; work still running then is abandoned (its signal aborted).
   */
  private async withinBudget<T>(items: readonly T[], budgetMs: number, parent: AbortSignal, work: (item: T, signal: AbortSignal) => Promise<void>) {
    const budget = signalWithTimeout(parent, budgetMs, 'content budget spent');
    const signal = budget.signal;
    let next = 0;
    const worker = async () => {
      while (next < items.length && !signal.aborted) await work(items[next++]!, signal);
    };
    const workers = Promise.all(Array.from({ length: Math.min(this.tuning.concurrency, items.length) }, worker));
    // A provider that ignores the signal must not hold the response past the budget.
    const outOfTime = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    try {
      await Promise.race([workers, outOfTime]);
    } finally {
      budget.dispose();
    }
  }

  /**
   * The first text a provider of the chain has for the page. When none has, the reason is the most
   * telling one any gave: a page's own failure (404, refused address) over a plain "not found", a
   * timeout when the budget ran out.
   */
  async fetchPage(url: string, maxCharacters: number, signal: AbortSignal, markdown = false): Promise<PageResult> {
    if (!HTTP_URL.test(url)) return { url, failure: 'error' };
    let failure: PageFailure = { failure: 'not_found' };
    let tried = false;
    for (const provider of this.chain) {
      if (signal.aborted) return { url, failure: 'timeout' };
      // A provider whose circuit is open or that paused us is passed over, not waited for.
      const admission = this.upstream.admit(provider.name, 'content');
      if (!admission.admitted) continue;
      tried = true;
      try {
        const page = await this.upstream.once(provider.name, 'content', () => provider.fetchContent(url, { maxCharacters, markdown, signal }));
        if (isPageFailure(page)) {
          if (failure.failure === 'not_found' && failure.httpStatus === undefined) failure = page;
        } else if (page?.text) {
          return { url, page, provider: provider.name };
        }
      } catch (error) {
        this.logger.debug('content fetch failed', { provider: provider.name, url, reason: (error as Error).message });
        if (signal.aborted) return { url, failure: 'timeout' };
        if (failure.failure === 'not_found' && failure.httpStatus === undefined) failure = { failure: 'error' };
      } finally {
        admission.release();
      }
    }
    return tried ? { url, ...failure } : { url, failure: 'error' };
  }
}
