/**
 * Provider health: a circuit breaker per provider and operation, and pauses for upstreams that
 * tell us to back off.
 *
 * - Closed: calls flow. Consecutive failures, or an error rate over a sliding window, open it.
 * - Open: calls skip the provider (the chain moves on at once instead of waiting for a timeout).
 *   After openMs it lets one probe through (half-open); each failed probe doubles openMs up to
 *   maxOpenMs, so a provider that stays down costs one call per period, not one per request.
 * - Half-open: one probe at a time; its success closes the circuit, its failure reopens it.
 *
 * Rate limits and used-up quotas are not failures of the provider's health: the upstream works and
 * told us to wait. They pause the provider for its Retry-After (or a configured default) without
 * counting towards the breaker. A 4xx that says our request was wrong proves the upstream answers,
 * so it counts as a success.
 */
import type { UpstreamFailureKind } from '../providers/errors.js';

export type Operation = 'search' | 'content' | 'rerank';

export interface HealthPolicy {
  /** Consecutive failures that open the circuit. */
  failureThreshold: number;
  /** Share of failed calls in the window that opens the circuit… */
  errorRateThreshold: number;
  /** …once the window holds at least this many calls. */
  minimumCalls: number;
  windowMs: number;
  /** How long the circuit first stays open; doubled after each failed probe, up to maxOpenMs. */
  openMs: number;
  maxOpenMs: number;
  /** Pause after a 429 that carries no Retry-After. */
  rateLimitedPauseMs: number;
  /** Pause after an upstream says the plan's credits or quota are used up, without Retry-After. */
  quotaPauseMs: number;
}

export type CircuitState = 'closed' | 'open' | 'half_open';

/** Why a provider is skipped right now. */
export type Unavailability = 'circuit_open' | 'probing' | 'rate_limited' | 'quota';

const BREAKER_FAILURES: ReadonlySet<UpstreamFailureKind> = new Set(['unavailable', 'network', 'timeout', 'garbage', 'auth']);
const PROBE_LEASE_MS = 60_000;
/** Outcomes kept for the error rate: enough for any sane window, bounded under a flood. */
const MAX_WINDOW_OUTCOMES = 2_048;

export type Admission =
  | { admitted: true; release(): void }
  | { admitted: false; reason: Unavailability; retryAfterMs: number };

export interface HealthSnapshot {
  provider: string;
  operation: Operation;
  state: CircuitState;
  /** When the provider is skipped, why and for how long. */
  unavailable: { reason: Unavailability; retryAfterMs: number } | null;
  consecutiveFailures: number;
  /** Failed share of the calls in the window; null before minimumCalls. */
  errorRate: number | null;
  callsInWindow: number;
  opened: number;
  lastFailure: { kind: UpstreamFailureKind | 'error'; status: number | null; at: string } | null;
}

export class ProviderHealth {
  private state: CircuitState = 'closed';
  private consecutiveFailures = 0;
  private readonly outcomes: Array<{ at: number; failed: boolean }> = [];
  private openUntil = 0;
  private currentOpenMs: number;
  private probeLeaseUntil = 0;
  private pausedUntil = 0;
  private pauseReason: 'rate_limited' | 'quota' = 'rate_limited';
  private lastFailure: HealthSnapshot['lastFailure'] = null;
  /** Times the circuit has opened, for /metrics. */
  opened = 0;

  constructor(
    readonly provider: string,
    readonly operation: Operation,
    private readonly policy: HealthPolicy,
    private readonly now: () => number = Date.now,
    private readonly onTransition: (to: CircuitState) => void = () => {},
  ) {
    this.currentOpenMs = policy.openMs;
  }

  /**
   * Whether a call may go to this provider now. An admitted call in the half-open state is the probe:
   * release() must follow in every case, so that a probe that never ran does not block the next.
   */
  admit(): Admission {
    const now = this.now();
    const refusal = this.refusal(now);
    if (refusal) return { admitted: false, ...refusal };
    if (this.state === 'closed') return ADMITTED;
    // Open past openUntil, or half-open with no probe out: this call is the probe.
    this.transition('half_open');
    const lease = now + PROBE_LEASE_MS;
    this.probeLeaseUntil = lease;
    return {
      admitted: true,
      release: () => {
        if (this.probeLeaseUntil === lease) this.probeLeaseUntil = 0;
      },
    };
  }

  /** Whether retrying a failed call still makes sense: not once the circuit has opened or a pause began. */
  get acceptsRetries(): boolean {
    return this.state !== 'open' && this.pausedUntil <= this.now();
  }

  recordSuccess(): void {
    this.remember(false);
    this.consecutiveFailures = 0;
    this.probeLeaseUntil = 0;
    if (this.state !== 'closed') {
      this.currentOpenMs = this.policy.openMs;
      this.outcomes.length = 0;
      this.transition('closed');
    }
  }

  recordFailure(kind: UpstreamFailureKind | 'error', status?: number, retryAfterMs?: number): void {
    const now = this.now();
    if (kind === 'bad_request') return this.recordSuccess();
    this.lastFailure = { kind, status: status ?? null, at: new Date(now).toISOString() };
    if (kind === 'rate_limited' || kind === 'quota') {
      const pauseMs = retryAfterMs ?? (kind === 'quota' ? this.policy.quotaPauseMs : this.policy.rateLimitedPauseMs);
      if (now + pauseMs > this.pausedUntil) {
        this.pausedUntil = now + pauseMs;
        this.pauseReason = kind;
      }
      this.probeLeaseUntil = 0;
      return;
    }
    // A thrown bug or an abort is not evidence about the upstream.
    if (kind === 'error' || !BREAKER_FAILURES.has(kind)) return;
    this.remember(true);
    this.consecutiveFailures++;
    this.probeLeaseUntil = 0;
    if (this.state === 'half_open') {
      this.currentOpenMs = Math.min(this.currentOpenMs * 2, this.policy.maxOpenMs);
      this.open(now);
    } else if (this.state === 'closed' && this.shouldOpen(now)) {
      this.open(now);
    }
  }

  snapshot(): HealthSnapshot {
    const now = this.now();
    this.prune(now);
    const admission = this.refusal(now);
    const failed = this.outcomes.filter((outcome) => outcome.failed).length;
    return {
      provider: this.provider,
      operation: this.operation,
      state: this.state === 'open' && now >= this.openUntil ? 'half_open' : this.state,
      unavailable: admission,
      consecutiveFailures: this.consecutiveFailures,
      errorRate: this.outcomes.length >= this.policy.minimumCalls ? failed / this.outcomes.length : null,
      callsInWindow: this.outcomes.length,
      opened: this.opened,
      lastFailure: this.lastFailure,
    };
  }

  /** Why a call may not go to the provider now, and for how long; null when it may. */
  private refusal(now: number): HealthSnapshot['unavailable'] {
    if (this.pausedUntil > now) return { reason: this.pauseReason, retryAfterMs: this.pausedUntil - now };
    if (this.state === 'open' && now < this.openUntil) return { reason: 'circuit_open', retryAfterMs: this.openUntil - now };
    if (this.state !== 'closed' && this.probeLeaseUntil > now) return { reason: 'probing', retryAfterMs: this.probeLeaseUntil - now };
    return null;
  }

  private shouldOpen(now: number): boolean {
    if (this.consecutiveFailures >= this.policy.failureThreshold) return true;
    this.prune(now);
    if (this.outcomes.length < this.policy.minimumCalls) return false;
    const failed = this.outcomes.filter((outcome) => outcome.failed).length;
    return failed / this.outcomes.length >= this.policy.errorRateThreshold;
  }

  private open(now: number): void {
    this.openUntil = now + this.currentOpenMs;
    this.opened++;
    this.transition('open');
  }

  private transition(to: CircuitState): void {
    if (this.state === to) return;
    this.state = to;
    this.onTransition(to);
  }

  private remember(failed: boolean): void {
    const now = this.now();
    this.outcomes.push({ at: now, failed });
    if (this.outcomes.length > MAX_WINDOW_OUTCOMES) this.outcomes.shift();
  }

  private prune(now: number): void {
    const oldest = now - this.policy.windowMs;
    let stale = 0;
    while (stale < this.outcomes.length && this.outcomes[stale]!.at < oldest) stale++;
    if (stale) this.outcomes.splice(0, stale);
  }
}

const ADMITTED: Admission = { admitted: true, release() {} };

/** Every provider's health, one tracker per provider and operation. */
export class HealthRegistry {
  private readonly trackers = new Map<string, ProviderHealth>();

  constructor(
    private readonly policy: HealthPolicy,
    private readonly now: () => number = Date.now,
    private readonly onTransition: (provider: string, operation: Operation, to: CircuitState) => void = () => {},
  ) {}

  of(provider: string, operation: Operation): ProviderHealth {
    const key = `${operation}\u0000${provider}`;
    let tracker = this.trackers.get(key);
    if (!tracker) {
      tracker = new ProviderHealth(provider, operation, this.policy, this.now, (to) => this.onTransition(provider, operation, to));
      this.trackers.set(key, tracker);
    }
    return tracker;
  }

  snapshots(): HealthSnapshot[] {
    return [...this.trackers.values()].map((tracker) => tracker.snapshot());
  }
}
