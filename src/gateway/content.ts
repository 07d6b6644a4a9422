/**
 * Page text for results whose search provider gave none, through the content chain, within a
 * per-request time budget. A page that cannot be had in time keeps its result, without text
 * (spec §2.2 allows that); it never fails the request.
 */
import type { Logger } from '../server/logger.js';
import type { ContentProvider, ProviderSearchResult } from '../providers/types.js';
import { signalWithTimeout } from '../util/timeout.js';
import type { Deadline } from './deadline.js';
import type { UpstreamCaller } from './upstream.js';

export interface ContentTuning {
  timeBudgetMs: number;
  concurrency: number;
}

export class ContentFiller {
  constructor(
    readonly chain: readonly ContentProvider[],
    private readonly tuning: ContentTuning,
    private readonly upstream: UpstreamCaller,
    private readonly logger: Logger,
  ) {}

  async fill(results: ProviderSearchResult[], maxCharacters: number, deadline: Deadline): Promise<void> {
    const missing = results.filter((result) => !result.text);
    if (missing.length === 0 || this.chain.length === 0) return;
    // Leave a little of the deadline for building the response.
    const budgetMs = Math.min(this.tuning.timeBudgetMs, Math.max(0, deadline.remainingMs() - 50));
    const budget = signalWithTimeout(deadline.signal, budgetMs, 'content budget spent');
    const signal = budget.signal;
    let next = 0;
    const worker = async () => {
      while (next < missing.length && !signal.aborted) {
        const result = missing[next++]!;
        result.text = await this.fetchText(result.url, maxCharacters, signal);
        if (result.text === null) delete result.text;
      }
    };
    const workers = Promise.all(Array.from({ length: Math.min(this.tuning.concurrency, missing.length) }, worker));
    // A provider that ignores the signal must not hold the response past the budget.
    const outOfTime = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    try {
      await Promise.race([workers, outOfTime]);
    } finally {
      budget.dispose();
    }
  }

  private async fetchText(url: string, maxCharacters: number, signal: AbortSignal): Promise<string | null> {
    for (const provider of this.chain) {
      if (signal.aborted) return null;
      // A provider whose circuit is open or that paused us is passed over, not waited for.
      const admission = this.upstream.admit(provider.name, 'content');
      if (!admission.admitted) continue;
      try {
        const page = await this.upstream.once(provider.name, 'content', () =>
          provider.fetchContent(url, { maxCharacters, signal }),
        );
        if (page?.text) return page.text;
      } catch (error) {
        this.logger.debug('content fetch failed', { provider: provider.name, url, reason: (error as Error).message });
      } finally {
        admission.release();
      }
    }
    return null;
  }
}
