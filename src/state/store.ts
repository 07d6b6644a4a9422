/**
 * What the gateway keeps about its users: accounts, API keys (as digests only), the per-day usage
 * ledger and dashboard sessions. Two implementations: the embedded SQLite file (one instance) and
 * PostgreSQL (several replicas). Both are the authority for the daily allowance, so that a lost cache
 * can never give an account its allowance back (spec §8: no manual reset).
 *
 * Times are epoch milliseconds; days are UTC calendar dates as 'YYYY-MM-DD'.
 */

export type AccountStatus = 'active' | 'disabled';

export interface Account {
  id: string;
  /** Unique; also the sign-in name of the dashboard. */
  name: string;
  email: string | null;
  status: AccountStatus;
  /** Units per UTC day; null means the configured default. */
  dailyAllowance: number | null;
  /** Short-term rate limits in requests; null means the configured default, 0 means none. */
  ratePerSecond: number | null;
  ratePerMinute: number | null;
  createdAt: number;
}

export interface NewAccount {
  name: string;
  email?: string | null;
  dailyAllowance?: number | null;
  ratePerSecond?: number | null;
  ratePerMinute?: number | null;
  /** A PHC-format password hash (argon2id); never the password itself. */
  passwordHash?: string | null;
}

export type AccountPatch = Partial<Pick<NewAccount, 'dailyAllowance' | 'ratePerSecond' | 'ratePerMinute' | 'passwordHash' | 'email'>> & {
  status?: AccountStatus;
};

export interface ApiKeyRecord {
  /** The public identifier inside the key; the visible prefix is `sg_<id>`. */
  id: string;
  accountId: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
  deletedAt: number | null;
}

export interface NewApiKey {
  id: string;
  accountId: string;
  name: string;
  /** SHA-256 of the whole key. */
  digest: Buffer;
}

/** A key as authentication needs it: its digest to compare, and the account it belongs to. */
export interface StoredCredential {
  key: ApiKeyRecord;
  digest: Buffer;
  account: Account;
}

export interface DailyCharge {
  granted: boolean;
  /** Units used that day after this charge (or, when refused, before it). */
  used: number;
}

export interface DailyUsage {
  day: string;
  used: number;
}

/** Units used on one day, from usage() asked for that day alone: it omits a day without use. */
export const usedThatDay = (oneDay: readonly DailyUsage[]) => oneDay[0]?.used ?? 0;

export interface Session {
  accountId: string;
  csrfToken: string;
  expiresAt: number;
}

export interface AccountStore {
  /** Applies the versioned migrations not yet applied; safe to call from several replicas at once. */
  migrate(): Promise<void>;
  close(): Promise<void>;

  /** Throws StoreConflictError when the name or email is taken. */
  createAccount(account: NewAccount, now: number): Promise<Account>;
  listAccounts(): Promise<Account[]>;
  /** By id, name or email. */
  findAccount(reference: string): Promise<Account | undefined>;
  /** Sign-in lookup by name or email; returns the account with its password hash. */
  findLogin(login: string): Promise<{ account: Account; passwordHash: string | null } | undefined>;
  /** Returns the updated account, or undefined when there is no such account. */
  updateAccount(id: string, patch: AccountPatch): Promise<Account | undefined>;

  insertKey(key: NewApiKey, now: number): Promise<ApiKeyRecord>;
  /** Keys of one account (or all), newest first; deleted ones only when asked. */
  listKeys(options?: { accountId?: string; includeDeleted?: boolean }): Promise<ApiKeyRecord[]>;
  /** Marks the key deleted; false when there is no such live key (of that account, when given). */
  deleteKey(id: string, now: number, accountId?: string): Promise<boolean>;
  /** The key with its account, deleted or not: the caller says why it is refused. */
  findCredential(id: string): Promise<StoredCredential | undefined>;
  /** Records last use; callers throttle how often. */
  touchKey(id: string, now: number): Promise<void>;

  /**
   * Adds `units` to the account's usage of `day` only when the total stays within `limit`, atomically:
   * concurrent charges from any number of processes never grant more than `limit`.
   */
  chargeDaily(accountId: string, day: string, units: number, limit: number): Promise<DailyCharge>;
  /** Gives back units of a charge whose request failed on our side (never below zero). */
  refundDaily(accountId: string, day: string, units: number): Promise<void>;
  /** Usage per day in [fromDay, toDay], days without use omitted, oldest first. */
  usage(accountId: string, fromDay: string, toDay: string): Promise<DailyUsage[]>;

  /** Sessions are stored by the SHA-256 of their cookie token. */
  createSession(tokenDigest: string, session: Session, now: number): Promise<void>;
  /** Undefined when absent or expired. */
  findSession(tokenDigest: string, now: number): Promise<Session | undefined>;
  deleteSession(tokenDigest: string): Promise<void>;
}

/** Short-term rate-limit windows: fixed per-second and per-minute buckets per account. */
export interface RateWindows {
  /**
   * Counts one request in every window whose limit is above zero, unless one of them is full: then
   * nothing is counted and the full window is named with the time until it rolls over. Either way it
   * reports the per-second window as the hit left it, read in the same round trip.
   */
  hit(accountId: string, limits: RateLimits, now: number): Promise<RateHit>;
  close(): Promise<void>;
}

export interface RateHit {
  /** Set when a window was full: then nothing was counted. */
  refusal: RateRefusal | undefined;
  /** The per-second window after the hit; null when the account has none (its limit is 0). */
  perSecond: WindowState | null;
}

/** A short-term window as a vendor's rate headers report it (Brave's): its limit, and what is left of it. */
export interface WindowState {
  limit: number;
  remaining: number;
}

/** The short-term window an account's request left it in, and when: for the X-RateLimit headers of vendors that report it. */
export interface RateWindowState {
  perSecond: WindowState | null;
  nowMs: number;
}

/** The per-second window holding `count` requests, or null when the account has no per-second limit. */
export const perSecondState = (limits: RateLimits, count: number): WindowState | null =>
  limits.perSecond > 0 ? { limit: limits.perSecond, remaining: Math.max(0, limits.perSecond - count) } : null;

export interface RateLimits {
  perSecond: number;
  perMinute: number;
}

export interface RateRefusal {
  window: 'second' | 'minute';
  limit: number;
  retryAfterMs: number;
}

export class StoreConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreConflictError';
  }
}

export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Start of the next UTC day: when the daily allowance resets. */
export function nextUtcMidnight(ms: number): number {
  const date = new Date(ms);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
}

export const WINDOW_MS = { second: 1000, minute: 60_000 } as const;

/** The fixed window `now` falls in, and how long until it ends. */
export function windowOf(kind: keyof typeof WINDOW_MS, now: number) {
  const size = WINDOW_MS[kind];
  const start = Math.floor(now / size) * size;
  return { start, endsInMs: start + size - now };
}

export type WindowKind = keyof typeof WINDOW_MS;

const LIMIT_OF = { second: 'perSecond', minute: 'perMinute' } as const satisfies Record<WindowKind, keyof RateLimits>;

/** The windows `now` counts in: those whose limit is above zero, shortest first. */
export function activeWindows(limits: RateLimits, now: number) {
  return (Object.keys(WINDOW_MS) as WindowKind[])
    .map((kind) => ({ kind, limit: limits[LIMIT_OF[kind]], start: windowOf(kind, now).start }))
    .filter((window) => window.limit > 0);
}

/** When several windows are full, names the one that frees up last: retrying sooner is refused again. */
export function refusalOf(full: readonly WindowKind[], limits: RateLimits, now: number): RateRefusal {
  return full
    .map((kind) => ({ window: kind, limit: limits[LIMIT_OF[kind]], retryAfterMs: windowOf(kind, now).endsInMs }))
    .reduce((longest, refusal) => (refusal.retryAfterMs > longest.retryAfterMs ? refusal : longest));
}
