/**
 * Where a request's cost is charged. Operator keys from config carry no allowance of their own and
 * are not metered; account keys charge their account (accounts.ts).
 */
import { ApiError } from '../api/errors.js';
import { rateLimitHeaders, type AccountService, type Charge } from './accounts.js';
import type { Principal } from './keys.js';
import type { RateWindowState } from './store.js';

export type { Charge } from './accounts.js';

export interface AllowanceGrant {
  /** X-RateLimit-* for the response. */
  headers: Record<string, string>;
  /** The short-term window the request left the account in, for vendors whose rate headers report it (Brave). */
  windows: RateWindowState;
  /** Units charged (0 when the operation's weight is 0). */
  units: number;
  /** Gives the charge back when the request then fails on our side (5xx). */
  refund(): Promise<void>;
}

export interface AllowanceLedger {
  /** Throws ApiError 429 when the principal may not make this request now. */
  consume(principal: Principal, charge: Charge): Promise<AllowanceGrant | undefined>;
}

/** What operators see on /metrics: units charged and refusals by limit, never per account (unbounded labels). */
export interface LedgerMetrics {
  allowanceUnits: { inc(labels: { operation: Charge; outcome: 'charged' | 'refunded' }, value: number): void };
  allowanceRefusals: { inc(labels: { operation: Charge; limit: string }): void };
}

export class AccountLedger implements AllowanceLedger {
  constructor(
    private readonly accounts: AccountService,
    private readonly metrics: LedgerMetrics,
  ) {}

  async consume(principal: Principal, charge: Charge): Promise<AllowanceGrant | undefined> {
    if (!principal.account) return undefined;
    const { usage, windows, refund, units } = await this.accounts.charge(principal.account, charge).catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 429) {
        this.metrics.allowanceRefusals.inc({ operation: charge, limit: error.headers['X-RateLimit-Scope'] ?? 'unknown' });
      }
      throw error;
    });
    this.metrics.allowanceUnits.inc({ operation: charge, outcome: 'charged' }, units);
    return {
      headers: rateLimitHeaders(usage),
      windows,
      units,
      refund: async () => {
        await refund();
        this.metrics.allowanceUnits.inc({ operation: charge, outcome: 'refunded' }, units);
      },
    };
  }
}
