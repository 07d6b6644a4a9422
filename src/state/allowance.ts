/**
 * Where a request's cost is charged. Operator keys from config carry no allowance of their own, so
 * their ledger admits everything; per-account daily allowances plug in here.
 */
import type { Principal } from './keys.js';

export type Charge = 'web-search' | 'rerank';

export interface AllowanceLedger {
  /** Throws ApiError 429 when the principal may not make this request now. */
  consume(principal: Principal, charge: Charge): Promise<void>;
}

export const unmeteredLedger: AllowanceLedger = {
  async consume() {},
};
