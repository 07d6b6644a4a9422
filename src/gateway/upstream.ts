/**
 * Every upstream call goes through here: bounded retries of retryable failures only, exponential
 * backoff with jitter, Retry-After honoured, the request deadline respected, a metric for
 * each attempt, and each outcome reported to the provider's health (src/gateway/health.ts). The
 * chain helper skips providers whose circuit is open or that asked us to wait, and turns a chain's
 * failures into the status at our edge.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, retryAfterSeconds } from '../api/errors.js';
import { UpstreamError } from '../providers/errors.js';
import type { Logger } from '../server/logger.js';
import { seriesCache, type Metrics } from '../server/metrics.js';
import type { Deadline } from './deadline.js';
import type { HealthRegistry, Operation, Unavailability } from './health.js';

export interface RetryPolicy {
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
}

export class UpstreamCaller {
  constructor(
    private readonly policy: RetryPolicy,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    readonly health: HealthRegistry,
  ) {
    this.series = seriesCache(metrics.upstreamRequests, metrics.upstreamDuration);
  }

  /** Runs one attempt, with no retry: for calls bounded by a budget smaller than a retry cycle. */
  async once<T>(provider: string, operation: Operation, attempt: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const health = this.health.of(provider, operation);
    try {
      const result = await attempt();
      this.record(provider, operation, 'success', started);
      health.recordSuccess();
      return result;
    } catch (error) {
      const kind = error instanceof UpstreamError ? error.kind : 'error';
      this.record(provider, operation, kind, started);
      health.recordFailure(kind, (error as UpstreamError).status, (error as UpstreamError).retryAfterMs);
      throw error;
    }
  }

  /**
   * Whether a provider may be called now; when it may not, the skip is counted. An admitted call
   * must release() when done (see ProviderHealth.admit).
   */
  admit(provider: string, operation: Operation) {
    const admission = this.health.of(provider, operation).admit();
    if (!admission.admitted) this.metrics.upstreamSkipped.inc({ provider, operation, reason: admission.reason });
    return admission;
  }

  /**
   * One provider's turn in a chain or a fan-out: skipped without a call while its circuit is open or
   * it has paused us, else `attempt`. A skip or a failure is added to `failures` (and a failure
   * logged) and yields undefined; the caller decides what the failures mean at our edge.
   */
  async turn<T>(
    provider: string,
    operation: Operation,
    deadline: Deadline,
    failures: ChainFailure[],
    attempt: () => Promise<T>,
  ): Promise<{ value: T } | undefined> {
    const admission = this.admit(provider, operation);
    if (!admission.admitted) {
      failures.push({ provider, skipped: admission.reason, retryAfterMs: admission.retryAfterMs });
      return undefined;
    }
    try {
      return { value: await attempt() };
    } catch (error) {
      const failure = asUpstreamError(error, provider, deadline);
      failures.push({ provider, error: failure });
      this.logger.warn('upstream failed', { provider, operation, kind: failure.kind, status: failure.status, reason: failure.message });
      return undefined;
    } finally {
      admission.release();
    }
  }

  /**
   * Tries each provider in order until one answers, skipping those whose circuit is open or that
   * asked us to wait. A provider that answers with nothing is an answer; only failures fall through.
   */
  async firstThatAnswers<P extends { name: string }, T>(
    chain: readonly P[],
    operation: Operation,
    deadline: Deadline,
    attempt: (provider: P) => Promise<T>,
  ): Promise<T> {
    if (chain.length === 0) throw new ApiError(503, `no ${operation} provider is configured`);
    const failures: ChainFailure[] = [];
    for (const provider of chain) {
      if (deadline.expired) break;
      const answer = await this.turn(provider.name, operation, deadline, failures, () => attempt(provider));
      if (answer) return answer.value;
    }
    throw chainFailure(operation, failures, deadline);
  }

  /**
   * Calls `attempt` until it answers, retrying retryable failures up to `retries` times with
   * exponential backoff and jitter (delay n in [min·2^n, 2·min·2^n], capped at maxDelayMs), plus
   * a provider's Retry-After where it gave one. A loop of its own rather than p-retry's: nearly every
   * call answers at the first attempt, and p-retry's set-up (options copied and checked, a signal
   * read before and after the attempt) cost more than the loop does in all (docs/benchmarks.md,
   * "Gateway overhead").
   */
  async withRetries<T>(provider: string, operation: Operation, deadline: Deadline, attempt: () => Promise<T>): Promise<T> {
    for (let retry = 0; ; retry++) {
      try {
        return await this.once(provider, operation, attempt);
      } catch (error) {
        const waitMs = this.retryWaitMs(error, provider, operation, deadline, retry);
        if (waitMs === null) throw error;
        this.metrics.upstreamRetries.inc({ provider, operation });
        this.logger.debug('retrying upstream', { provider, operation, reason: (error as UpstreamError).kind });
        // Rejects with the deadline's abort when it passes first; the caller reads that as a timeout.
        await sleep(waitMs, undefined, { signal: deadline.signal });
      }
    }
  }

  /** How long to wait before retry number `retry` (from 0) after `error`; null when it is not retried. */
  private retryWaitMs(error: unknown, provider: string, operation: Operation, deadline: Deadline, retry: number): number | null {
    if (retry >= this.policy.retries) return null;
    if (!(error instanceof UpstreamError) || !error.retryable || deadline.expired) return null;
    // A 429 pauses the provider; waiting out its Retry-After is the one retry that pause allows.
    if (error.kind !== 'rate_limited' && !this.health.of(provider, operation).acceptsRetries) return null;
    // Waiting past our own deadline or the operator's cap helps nobody: fall back instead.
    const { retryAfterMs } = error;
    if (retryAfterMs !== undefined && (retryAfterMs > this.policy.maxRetryAfterMs || retryAfterMs >= deadline.remainingMs())) return null;
    const backoffMs = Math.min(Math.round((1 + Math.random()) * this.policy.minDelayMs * 2 ** retry), this.policy.maxDelayMs);
    return backoffMs + (retryAfterMs ?? 0);
  }

  private readonly series: ReturnType<typeof seriesCache<'provider' | 'operation' | 'outcome'>>;

  private record(provider: string, operation: Operation, outcome: string, started: number) {
    const series = this.series({ provider, operation, outcome });
    series.count.inc();
    series.duration.observe((performance.now() - started) / 1000);
  }
}

/** One provider of a chain that did not answer: it failed, or it was skipped without a call. */
export type ChainFailure =
  | { provider: string; error: UpstreamError; skipped?: undefined }
  | { provider: string; skipped: Unavailability; retryAfterMs: number; error?: undefined };

function asUpstreamError(error: unknown, provider: string, deadline: Deadline): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (deadline.expired) return new UpstreamError(provider, 'timeout', 'request deadline reached');
  throw error;
}

const SKIP_REASONS: Record<Unavailability, string> = {
  circuit_open: 'circuit open after repeated failures',
  probing: 'recovering, a probe is in flight',
  rate_limited: 'paused after a rate limit',
  quota: 'paused: its quota or credits are used up',
};

/**
 * The status at our edge when no provider of a chain answered: 504 when time ran out; 503 with
 * Retry-After when every provider is rate-limited, out of quota or skipped (never an empty 200);
 * 502 when an upstream failed or sent something unreadable.
 */
export function chainFailure(what: string, failures: readonly ChainFailure[], deadline: Deadline): ApiError {
  const detail = failures
    .map((failure) => (failure.error ? failure.error.message : `${failure.provider}: ${SKIP_REASONS[failure.skipped]}`))
    .join('; ');
  const tried = failures.flatMap((failure) => (failure.error ? [failure.error] : []));
  const last = tried.at(-1);
  if (deadline.expired || last?.kind === 'timeout') {
    return new ApiError(504, `${what} provider timed out${detail ? ` (${detail})` : ` after ${deadline.budgetMs} ms`}`);
  }
  const throttled = tried.every((failure) => failure.kind === 'rate_limited' || failure.kind === 'quota');
  if (failures.length > 0 && throttled) {
    const waits = failures
      .map((failure) => (failure.error ? failure.error.retryAfterMs : failure.retryAfterMs))
      .filter((ms): ms is number => ms !== undefined);
    const headers: Record<string, string> = waits.length ? { 'Retry-After': String(retryAfterSeconds(Math.min(...waits))) } : {};
    const why =
      tried.length === 0
        ? `no ${what} provider is available right now`
        : `every ${what} provider is rate-limiting this gateway or out of quota`;
    return new ApiError(503, `${why}; try again later (${detail})`, headers);
  }
  return new ApiError(502, `${what} provider failure (${detail})`);
}
