/**
 * The embedded account store: one SQLite file (better-sqlite3). WAL journal, and by default
 * `synchronous = FULL`, so a committed key or charge survives kill -9 and power loss alike; `normal`
 * keeps it across a process crash only, and costs no fsync per request (docs/benchmarks.md).
 *
 * better-sqlite3 is synchronous: each statement is atomic within the process, and the single-statement
 * charge below is atomic across processes too, because SQLite serialises writers on the file lock.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { CREDENTIAL_COLUMNS, accountConflict, normalizeEmail, patchAssignments, toAccount, toCredential, toKey, type AccountRow, type CredentialRow, type KeyRow } from './rows.js';
import {
  activeWindows,
  perSecondState,
  refusalOf,
  usedThatDay,
  windowOf,
  type Account,
  type AccountPatch,
  type AccountStore,
  type ApiKeyRecord,
  type DailyCharge,
  type DailyUsage,
  type NewAccount,
  type NewApiKey,
  type RateHit,
  type RateLimits,
  type RateWindows,
  type Session,
  type StoredCredential,
} from './store.js';

export interface EmbeddedStoreOptions {
  path: string;
  synchronous?: 'full' | 'normal';
}

const MIGRATIONS: Array<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'accounts, keys, usage, sessions',
    sql: `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        email TEXT UNIQUE,
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
        daily_allowance INTEGER,
        rate_per_second INTEGER,
        rate_per_minute INTEGER,
        password_hash TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        name TEXT NOT NULL,
        digest BLOB NOT NULL,
        created_at INTEGER NOT NULL,
        last_used_at INTEGER,
        deleted_at INTEGER
      );
      CREATE INDEX api_keys_account ON api_keys(account_id);
      CREATE TABLE usage_daily (
        account_id TEXT NOT NULL REFERENCES accounts(id),
        day TEXT NOT NULL,
        used INTEGER NOT NULL,
        PRIMARY KEY (account_id, day)
      );
      CREATE TABLE sessions (
        token_digest TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        csrf_token TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL
      );
    `,
  },
];

interface QueuedCharge {
  accountId: string;
  day: string;
  units: number;
  limit: number;
  resolve(charge: DailyCharge): void;
  reject(error: unknown): void;
}

export class EmbeddedStore implements AccountStore {
  readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private queuedCharges: QueuedCharge[] = [];

  constructor({ path, synchronous = 'full' }: EmbeddedStoreOptions) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    this.db.pragma('foreign_keys = ON');
    // Another process (the CLI) may hold the write lock for a moment.
    this.db.pragma('busy_timeout = 5000');
  }

  async migrate(): Promise<void> {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
    const apply = this.db.transaction((migration: (typeof MIGRATIONS)[number]) => {
      // Re-checked inside the write transaction: a second process may have applied it meanwhile.
      if (this.statement('SELECT 1 FROM schema_migrations WHERE version = ?').get(migration.version)) return;
      this.db.exec(migration.sql);
      this.statement('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, Date.now());
    });
    for (const migration of MIGRATIONS) apply.immediate(migration);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  async createAccount(account: NewAccount, now: number): Promise<Account> {
    const row: AccountRow = {
      id: randomUUID(),
      name: account.name,
      email: normalizeEmail(account.email),
      status: 'active',
      daily_allowance: account.dailyAllowance ?? null,
      rate_per_second: account.ratePerSecond ?? null,
      rate_per_minute: account.ratePerMinute ?? null,
      password_hash: account.passwordHash ?? null,
      created_at: now,
    };
    try {
      this.statement(
        `INSERT INTO accounts (id, name, email, status, daily_allowance, rate_per_second, rate_per_minute, password_hash, created_at)
         VALUES (@id, @name, @email, @status, @daily_allowance, @rate_per_second, @rate_per_minute, @password_hash, @created_at)`,
      ).run(row);
    } catch (error) {
      throw conflictOr(error);
    }
    return toAccount(row);
  }

  async listAccounts(): Promise<Account[]> {
    return (this.statement('SELECT * FROM accounts ORDER BY created_at, name').all() as AccountRow[]).map(toAccount);
  }

  async findAccount(reference: string): Promise<Account | undefined> {
    // An id wins over a name, a name over an email, should one account's name be another's id; the
    // same order as the Postgres store, rather than whichever row the query plan meets first.
    const row = this.statement(
      `SELECT * FROM accounts WHERE id = @reference OR name = @reference OR email = @email
       ORDER BY id = @reference DESC, name = @reference DESC LIMIT 1`,
    ).get({ reference, email: normalizeEmail(reference) }) as AccountRow | undefined;
    return row && toAccount(row);
  }

  async findLogin(login: string) {
    const row = this.statement('SELECT * FROM accounts WHERE name = @login OR email = @email ORDER BY name = @login DESC LIMIT 1')
      .get({ login, email: normalizeEmail(login) }) as AccountRow | undefined;
    return row && { account: toAccount(row), passwordHash: row.password_hash };
  }

  async updateAccount(id: string, patch: AccountPatch): Promise<Account | undefined> {
    const assignments = patchAssignments(patch);
    if (assignments.length) {
      const columns = assignments.map(([column]) => `${column} = ?`).join(', ');
      try {
        this.statement(`UPDATE accounts SET ${columns} WHERE id = ?`).run(...assignments.map(([, value]) => value), id);
      } catch (error) {
        throw conflictOr(error);
      }
    }
    const row = this.statement('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
    return row && toAccount(row);
  }

  async insertKey(key: NewApiKey, now: number): Promise<ApiKeyRecord> {
    this.statement('INSERT INTO api_keys (id, account_id, name, digest, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(key.id, key.accountId, key.name, key.digest, now);
    return { id: key.id, accountId: key.accountId, name: key.name, createdAt: now, lastUsedAt: null, deletedAt: null };
  }

  async listKeys({ accountId, includeDeleted = false }: { accountId?: string; includeDeleted?: boolean } = {}): Promise<ApiKeyRecord[]> {
    const rows = this.statement(
      `SELECT * FROM api_keys WHERE (@accountId IS NULL OR account_id = @accountId) AND (@includeDeleted = 1 OR deleted_at IS NULL)
       ORDER BY created_at DESC, id DESC`,
    ).all({ accountId: accountId ?? null, includeDeleted: includeDeleted ? 1 : 0 }) as KeyRow[];
    return rows.map(toKey);
  }

  async deleteKey(id: string, now: number, accountId?: string): Promise<boolean> {
    const result = this.statement('UPDATE api_keys SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL AND (? IS NULL OR account_id = ?)')
      .run(now, id, accountId ?? null, accountId ?? null);
    return result.changes === 1;
  }

  async findCredential(id: string): Promise<StoredCredential | undefined> {
    const row = this.statement(`SELECT ${CREDENTIAL_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = ?`).get(id) as
      | CredentialRow
      | undefined;
    return row && toCredential(row);
  }

  async touchKey(id: string, now: number): Promise<void> {
    this.statement('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)').run(now, id, now);
  }

  /**
   * Group commit: the charges that arrive within one turn of the event loop are applied in one
   * transaction, so that under load one fsync serves many requests instead of one each. Each still
   * answers only after its transaction has committed, and within it the charges apply one after
   * another, so exactness is unchanged.
   */
  chargeDaily(accountId: string, day: string, units: number, limit: number): Promise<DailyCharge> {
    return new Promise((resolve, reject) => {
      if (this.queuedCharges.push({ accountId, day, units, limit, resolve, reject }) === 1) setImmediate(() => this.commitQueuedCharges());
    });
  }

  private commitQueuedCharges() {
    const batch = this.queuedCharges;
    this.queuedCharges = [];
    let results: DailyCharge[];
    try {
      results = this.db.transaction(() => batch.map((charge) => this.applyCharge(charge)))();
    } catch (error) {
      for (const charge of batch) charge.reject(error);
      return;
    }
    batch.forEach((charge, i) => charge.resolve(results[i]!));
  }

  private applyCharge({ accountId, day, units, limit }: QueuedCharge): DailyCharge {
    if (units <= limit) {
      const row = this.statement(
        `INSERT INTO usage_daily (account_id, day, used) VALUES (?, ?, ?)
         ON CONFLICT (account_id, day) DO UPDATE SET used = used + excluded.used WHERE used + excluded.used <= ?
         RETURNING used`,
      ).get(accountId, day, units, limit) as { used: number } | undefined;
      if (row) return { granted: true, used: row.used };
    }
    return { granted: false, used: usedThatDay(this.usageBetween(accountId, day, day)) };
  }

  /** Prepared once per SQL text: parsing a statement costs more than running these small ones. */
  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }

  async refundDaily(accountId: string, day: string, units: number): Promise<void> {
    this.statement('UPDATE usage_daily SET used = MAX(0, used - ?) WHERE account_id = ? AND day = ?').run(units, accountId, day);
  }

  async usage(accountId: string, fromDay: string, toDay: string): Promise<DailyUsage[]> {
    return this.usageBetween(accountId, fromDay, toDay);
  }

  /** usage() for a charge inside the batch transaction, which cannot wait for a promise. */
  private usageBetween(accountId: string, fromDay: string, toDay: string): DailyUsage[] {
    return this.statement('SELECT day, used FROM usage_daily WHERE account_id = ? AND day BETWEEN ? AND ? AND used > 0 ORDER BY day')
      .all(accountId, fromDay, toDay) as DailyUsage[];
  }

  async createSession(tokenDigest: string, session: Session, now: number): Promise<void> {
    this.statement('DELETE FROM sessions WHERE expires_at <= ?').run(now);
    this.statement('INSERT INTO sessions (token_digest, account_id, csrf_token, expires_at, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(tokenDigest, session.accountId, session.csrfToken, session.expiresAt, now);
  }

  async findSession(tokenDigest: string, now: number): Promise<Session | undefined> {
    const row = this.statement('SELECT account_id, csrf_token, expires_at FROM sessions WHERE token_digest = ? AND expires_at > ?')
      .get(tokenDigest, now) as { account_id: string; csrf_token: string; expires_at: number } | undefined;
    return row && { accountId: row.account_id, csrfToken: row.csrf_token, expiresAt: row.expires_at };
  }

  async deleteSession(tokenDigest: string): Promise<void> {
    this.statement('DELETE FROM sessions WHERE token_digest = ?').run(tokenDigest);
  }
}

function conflictOr(error: unknown): unknown {
  const { code, message } = error as { code?: string; message?: string };
  if (code !== 'SQLITE_CONSTRAINT_UNIQUE') return error;
  return accountConflict(/accounts\.(\w+)/.exec(message ?? '')?.[1] ?? 'value');
}

/**
 * Rate windows of the embedded default: in memory, as the embedded store serves one process. A
 * restart forgets at most a minute of counts, which only a short-term limit depends on.
 */
export class MemoryRateWindows implements RateWindows {
  /** `<account>:<window>:<start>` → requests counted. */
  private readonly counts = new Map<string, number>();
  private sweptAt = 0;

  async hit(accountId: string, limits: RateLimits, now: number): Promise<RateHit> {
    const windows = activeWindows(limits, now).map((window) => ({ ...window, key: `${accountId}:${window.kind}:${window.start}` }));
    const countIn = (key: string) => this.counts.get(key) ?? 0;
    const full = windows.filter((window) => countIn(window.key) >= window.limit).map((window) => window.kind);
    if (full.length === 0) {
      for (const window of windows) this.counts.set(window.key, countIn(window.key) + 1);
      this.sweep(now);
    }
    const second = windows.find((window) => window.kind === 'second');
    return { refusal: full.length ? refusalOf(full, limits, now) : undefined, perSecond: perSecondState(limits, second ? countIn(second.key) : 0) };
  }

  async close(): Promise<void> {
    this.counts.clear();
  }

  /** Once a minute, forgets windows that have ended, so idle accounts cost nothing. */
  private sweep(now: number) {
    const minute = windowOf('minute', now).start;
    if (this.sweptAt === minute) return;
    this.sweptAt = minute;
    for (const key of this.counts.keys()) if (Number(key.slice(key.lastIndexOf(':') + 1)) < minute) this.counts.delete(key);
  }
}
