/**
 * Accounts as the API sees them: stored keys that authenticate, a daily allowance shared by all keys
 * of an account (spec §5.5, §8), and short-term rate limits. The store is the authority for the
 * allowance; rate windows live where the deployment says (memory, Redis or Postgres).
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { ApiError, retryAfterSeconds, unauthorized } from '../api/errors.js';
import {
  nextUtcMidnight,
  usedThatDay,
  utcDay,
  type Account,
  type AccountStore,
  type ApiKeyRecord,
  type DailyUsage,
  type RateLimits,
  type RateWindowState,
  type RateWindows,
} from './store.js';

/** What a request is charged as; each kind has its own weight in allowance units. */
export type Charge = 'web-search' | 'rerank' | 'content';

export interface AccountPolicy {
  defaults: { dailyAllowance: number; ratePerSecond: number; ratePerMinute: number };
  /** Allowance units each operation costs. */
  weights: Record<Charge, number>;
  /** last_used_at is written at most this often per key: a write per request would double the load. */
  touchIntervalMs: number;
}

/** `sg_<12 hex: public id>_<43 base64url: 256-bit secret>`; `sg_<id>` is the visible prefix. */
const KEY_PATTERN = /^sg_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
export const keyPrefix = (id: string) => `sg_${id}`;
/**
 * SHA-256 of a key or token: all that is stored of either. The one-shot crypto.hash costs a sixth of a
 * createHash object (4.4 µs on the benchmark machine; every authenticated request pays it); 'binary'
 * carries the digest's 32 bytes through the string unchanged.
 */
export const digestKey = (text: string) => Buffer.from(hash('sha256', text, 'binary'), 'binary');

export function newApiKey(): { id: string; key: string; digest: Buffer } {
  const id = randomBytes(6).toString('hex');
  const key = `${keyPrefix(id)}_${randomBytes(32).toString('base64url')}`;
  return { id, key, digest: digestKey(key) };
}

/** Stored keys have a recognisable shape; anything else can only be an operator key from config. */
export const parseStoredKey = (token: string) => KEY_PATTERN.exec(token)?.[1];

export interface AccountUsage {
  day: string;
  used: number;
  allowance: number;
  remaining: number;
  resetsAt: number;
}

/** Argon2id with the library's defaults (19 MiB, t=2, p=1: OWASP's minimum recommendation). */
export const hashPassword = (password: string) => argon2Hash(password);
let decoyHash: Promise<string> | undefined;
/**
 * Verified against when the login is unknown, so that the reply takes as long as for a wrong password.
 * Hashed on first use rather than on import: most processes (the CLI, most tests) never sign anyone in.
 */
const decoyHashOnce = () => (decoyHash ??= argon2Hash(randomBytes(16).toString('hex')));

export const MIN_PASSWORD_LENGTH = 10;

export class AccountService {
  private readonly touched = new Map<string, number>();
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    readonly store: AccountStore,
    readonly windows: RateWindows,
    readonly policy: AccountPolicy,
    private readonly now: () => number,
    private readonly onBackgroundError: (error: unknown) => void = () => {},
  ) {}

  limitsOf(account: Account): { dailyAllowance: number } & RateLimits {
    const { defaults } = this.policy;
    return {
      dailyAllowance: account.dailyAllowance ?? defaults.dailyAllowance,
      perSecond: account.ratePerSecond ?? defaults.ratePerSecond,
      perMinute: account.ratePerMinute ?? defaults.ratePerMinute,
    };
  }

  async createKey(accountId: string, name: string): Promise<{ key: string; record: ApiKeyRecord }> {
    const { id, key, digest } = newApiKey();
    const record = await this.store.insertKey({ id, accountId, name, digest }, this.now());
    return { key, record };
  }

  /**
   * The account behind a stored key (`id` is its public part, from parseStoredKey), or a 401 that
   * says why (spec §5.6: a deleted key is refused at once, since every request reads the store), or
   * 403 for a disabled account (spec §7).
   */
  async authenticate(id: string, token: string): Promise<{ account: Account; key: ApiKeyRecord }> {
    const credential = await this.store.findCredential(id);
    // Unknown ids are compared against a decoy, so the time taken does not tell an id exists.
    const expected = credential?.digest ?? DECOY_DIGEST;
    const matches = timingSafeEqual(expected, digestKey(token)) && credential !== undefined;
    if (!matches) throw unauthorized('invalid API key');
    const { account, key } = credential;
    if (key.deletedAt !== null) throw unauthorized(`API key ${keyPrefix(key.id)}… has been deleted; use another key of the account`);
    requireActive(account);
    this.touch(key.id);
    return { account, key };
  }

  /**
   * Charges one request: first the short-term windows, then the daily allowance. Throws 429 with a
   * message naming the limit that was hit. Returns the allowance state for the X-RateLimit headers,
   * the short-term window the request left the account in (Brave's headers report it), and a refund
   * for a request that then fails on our side.
   */
  async charge(
    account: Account,
    charge: Charge,
  ): Promise<{ usage: AccountUsage; windows: RateWindowState; units: number; refund: () => Promise<void> }> {
    const now = this.now();
    const limits = this.limitsOf(account);
    const day = utcDay(now);
    const resetsAt = nextUtcMidnight(now);
    const units = this.policy.weights[charge];
    const { refusal, perSecond } = await this.windows.hit(account.id, limits, now);
    const windows = { perSecond, nowMs: now };
    if (refusal) {
      const usage = await this.usageOn(account, day, resetsAt);
      const retrySeconds = retryAfterSeconds(refusal.retryAfterMs);
      throw new AccountLimitRefusal(
        `rate limit exceeded: this account may make ${refusal.limit} request${refusal.limit === 1 ? '' : 's'} per ${refusal.window}; retry in ${retrySeconds} s (the daily allowance is not exhausted: ${usage.remaining} of ${usage.allowance} left today)`,
        { 'Retry-After': String(retrySeconds), ...rateLimitHeaders(usage), 'X-RateLimit-Scope': refusal.window },
        windows,
      );
    }
    if (units === 0) return { usage: await this.usageOn(account, day, resetsAt), windows, units, refund: async () => {} };
    const { granted, used } = await this.store.chargeDaily(account.id, day, units, limits.dailyAllowance);
    const usage = usageOf(day, used, limits.dailyAllowance, resetsAt);
    if (!granted) {
      throw new AccountLimitRefusal(
        `daily allowance exhausted: ${used} of ${limits.dailyAllowance} units used today; it resets at ${new Date(resetsAt).toISOString()} (00:00 UTC), and new keys do not restore it`,
        { 'Retry-After': String(retryAfterSeconds(resetsAt - now)), ...rateLimitHeaders(usage), 'X-RateLimit-Scope': 'day' },
        windows,
      );
    }
    return { usage, windows, units, refund: () => this.store.refundDaily(account.id, day, units) };
  }

  /** Today's consumption and the last `days` days, for the dashboard. */
  async usageSummary(account: Account, days = 30): Promise<{ today: AccountUsage; history: DailyUsage[] }> {
    const now = this.now();
    const today = utcDay(now);
    const from = utcDay(now - (days - 1) * 86_400_000);
    const rows = await this.store.usage(account.id, from, today);
    const used = new Map(rows.map((row) => [row.day, row.used]));
    const history = Array.from({ length: days }, (_, i) => {
      const day = utcDay(now - (days - 1 - i) * 86_400_000);
      return { day, used: used.get(day) ?? 0 };
    });
    return { today: usageOf(today, used.get(today) ?? 0, this.limitsOf(account).dailyAllowance, nextUtcMidnight(now)), history };
  }

  /** The account whose password this is, or undefined; always costs one Argon2 verification. */
  async verifyLogin(login: string, password: string): Promise<Account | undefined> {
    // Awaited for known logins too, so that the first sign-in takes as long whether the login exists or not.
    const [found, decoy] = await Promise.all([this.store.findLogin(login), decoyHashOnce()]);
    const hash = found?.passwordHash ?? decoy;
    const ok = await argon2Verify(hash, password).catch(() => false);
    return ok && found?.passwordHash ? found.account : undefined;
  }

  /** Waits for background writes (last-used times) before the store closes. */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private async usageOn(account: Account, day: string, resetsAt: number): Promise<AccountUsage> {
    const used = usedThatDay(await this.store.usage(account.id, day, day));
    return usageOf(day, used, this.limitsOf(account).dailyAllowance, resetsAt);
  }

  private touch(keyId: string) {
    const now = this.now();
    const last = this.touched.get(keyId);
    if (last !== undefined && now - last < this.policy.touchIntervalMs) return;
    this.touched.set(keyId, now);
    const write = this.store
      .touchKey(keyId, now)
      .catch(this.onBackgroundError)
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }
}

/**
 * A 429 for one of the account's limits (a short-term window or the daily allowance), with the
 * short-term window the account is in, so that a vendor whose rate headers report it (Brave) can
 * answer a refusal in the same format as its other answers.
 */
export class AccountLimitRefusal extends ApiError {
  constructor(
    message: string,
    headers: Record<string, string>,
    readonly windows: RateWindowState,
  ) {
    super(429, message, headers);
    this.name = 'AccountLimitRefusal';
  }
}

/** Spec §7: a disabled account is 403, whether it comes with a key or a dashboard session. */
export function requireActive(account: Account) {
  if (account.status !== 'active') throw new ApiError(403, `account "${account.name}" is disabled; ask the operator to re-enable it`);
}

const DECOY_DIGEST = digestKey('searchgate decoy key');

function usageOf(day: string, used: number, allowance: number, resetsAt: number): AccountUsage {
  return { day, used, allowance, remaining: Math.max(0, allowance - used), resetsAt };
}

/** GitHub's convention: limit and remaining in units, reset as epoch seconds (of the next 00:00 UTC). */
export function rateLimitHeaders(usage: AccountUsage): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(usage.allowance),
    'X-RateLimit-Remaining': String(usage.remaining),
    'X-RateLimit-Reset': String(Math.floor(usage.resetsAt / 1000)),
  };
}
