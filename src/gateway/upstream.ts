/**
 * Every upstream call goes through here: bounded retries of retryable failures only, exponential
 * backoff with jitter (p-retry), Retry-After honoured, the request deadline respected, and a metric
 * for each attempt. Then the chain helper turns a chain's failures into the status at our edge.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry from 'p-retry';
import { ApiError } from '../api/errors.js';
import { UpstreamError } from '../providers/errors.js';
import type { Logger } from '../server/logger.js';
import { seriesCache, type Metrics } from '../server/metrics.js';
import type { Deadline } from './deadline.js';

export interface RetryPolicy {
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
}

export type Operation = 'search' | 'content' | 'rerank';

export class UpstreamCaller {
  constructor(
    private readonly policy: RetryPolicy,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {
    this.series = seriesCache(metrics.upstreamRequests, metrics.upstreamDuration);
  }

  /** Runs one attempt, with no retry: for calls bounded by a budget smaller than a retry cycle. */
  async once<T>(provider: string, operation: Operation, attempt: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await attempt();
      this.record(provider, operation, 'success', started);
      return result;
    } catch (error) {
      this.record(provider, operation, error instanceof UpstreamError ? error.kind : 'error', started);
      throw error;
    }
  }

  async withRetries<T>(provider: string, operation: Operation, deadline: Deadline, attempt: () => Promise<T>): Promise<T> {
    let waitForRetryAfterMs = 0;
    return pRetry(
      async () => {
        if (waitForRetryAfterMs > 0) {
          await sleep(waitForRetryAfterMs, undefined, { signal: deadline.signal });
          waitForRetryAfterMs = 0;
        }
        return this.once(provider, operation, attempt);
      },
      {
        retries: this.policy.retries,
        minTimeout: this.policy.minDelayMs,
        maxTimeout: this.policy.maxDelayMs,
        factor: 2,
        randomize: true,
        signal: deadline.signal,
        shouldRetry: ({ error }) => {
          if (!(error instanceof UpstreamError) || !error.retryable || deadline.expired) return false;
          if (error.retryAfterMs !== undefined) {
            // Waiting past our own deadline or the operator's cap helps nobody: fall back instead.
            if (error.retryAfterMs > this.policy.maxRetryAfterMs || error.retryAfterMs >= deadline.remainingMs()) return false;
            waitForRetryAfterMs = error.retryAfterMs;
          }
          this.metrics.upstreamRetries.inc({ provider, operation });
          this.logger.debug('retrying upstream', { provider, operation, reason: error.kind });
          return true;
        },
      },
    );
  }

  private readonly series: ReturnType<typeof seriesCache<'provider' | 'operation' | 'outcome'>>;

  private record(provider: string, operation: Operation, outcome: string, started: number) {
    const series = this.series({ provider, operation, outcome });
    series.count.inc();
    series.duration.observe((performance.now() - started) / 1000);
  }
}

/**
 * Tries each provider in order until one answers. A provider that answers with nothing is an
 * answer; only failures fall through. When all fail, the status says why: 504 if time ran out,
 * 503 if every provider is rate-limiting us (never an empty 200), 502 otherwise.
 */
export async function firstThatAnswers<P extends { name: string }, T>(
  chain: readonly P[],
  what: string,
  deadline: Deadline,
  logger: Logger,
  attempt: (provider: P) => Promise<T>,
): Promise<T> {
  if (chain.length === 0) throw new ApiError(503, `no ${what} provider is configured`);
  const failures: UpstreamError[] = [];
  for (const provider of chain) {
    if (deadline.expired) break;
    try {
      return await attempt(provider);
    } catch (error) {
      const failure = asUpstreamError(error, provider.name, deadline);
      failures.push(failure);
      logger.warn('upstream failed', { provider: provider.name, operation: what, kind: failure.kind, status: failure.status, reason: failure.message });
    }
  }
  throw chainFailure(what, failures, deadline);
}

function asUpstreamError(error: unknown, provider: string, deadline: Deadline): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (deadline.expired) return new UpstreamError(provider, 'timeout', 'request deadline reached');
  throw error;
}

function chainFailure(what: string, failures: UpstreamError[], deadline: Deadline): ApiError {
  const detail = failures.map((failure) => failure.message).join('; ');
  const last = failures.at(-1);
  if (deadline.expired || last?.kind === 'timeout') {
    return new ApiError(504, `${what} provider timed out${detail ? ` (${detail})` : ` after ${deadline.budgetMs} ms`}`);
  }
  if (failures.length > 0 && failures.every((failure) => failure.kind === 'rate_limited')) {
    const waits = failures.map((failure) => failure.retryAfterMs).filter((ms): ms is number => ms !== undefined);
    const headers: Record<string, string> = waits.length ? { 'Retry-After': String(Math.ceil(Math.min(...waits) / 1000)) } : {};
    return new ApiError(503, `every ${what} provider is rate-limiting this gateway; try again later (${detail})`, headers);
  }
  return new ApiError(502, `${what} provider failure (${detail})`);
}
