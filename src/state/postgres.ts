/**
 * The account store on PostgreSQL, for several gateway replicas sharing one database. Every check that
 * must hold across replicas (name/email uniqueness, the daily allowance, rate windows) is enforced by
 * a single statement or a row-locking transaction, never by a read followed by a separate write.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  CREDENTIAL_COLUMNS,
  accountConflict,
  normalizeEmail,
  patchAssignments,
  toAccount,
  toCredential,
  toKey,
  type AccountRow,
  type CredentialRow,
  type KeyRow,
  type StoredNumber,
} from './rows.js';
import {
  activeWindows,
  perSecondState,
  refusalOf,
  usedThatDay,
  type WindowKind,
  type WindowState,
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

export interface PostgresStoreOptions {
  /** A libpq connection URL, e.g. postgres://user@host:5432/db. */
  url: string;
  poolSize?: number;
  /** Keeps the tables in this schema (created when missing) instead of the user's default. */
  schema?: string;
}

interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts, keys, usage, sessions',
    sql: `
      CREATE TABLE accounts (
        id text PRIMARY KEY,
        name text NOT NULL CONSTRAINT accounts_name_unique UNIQUE,
        email text CONSTRAINT accounts_email_unique UNIQUE,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
        daily_allowance integer,
        rate_per_second integer,
        rate_per_minute integer,
        password_hash text,
        created_at bigint NOT NULL
      );
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        name text NOT NULL,
        digest bytea NOT NULL,
        created_at bigint NOT NULL,
        last_used_at bigint,
        deleted_at bigint
      );
      CREATE INDEX api_keys_account_id ON api_keys (account_id);
      CREATE TABLE usage_daily (
        account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        day date NOT NULL,
        used bigint NOT NULL CHECK (used >= 0),
        PRIMARY KEY (account_id, day)
      );
      CREATE TABLE sessions (
        token_digest text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        csrf_token text NOT NULL,
        expires_at bigint NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX sessions_account_id ON sessions (account_id);
    `,
  },
  {
    version: 2,
    name: 'rate windows',
    // No foreign key to accounts: this table is written on every request, and a stray row is harmless.
    // UNLOGGED: no WAL and no fsync per request; a crash empties it, which costs at most a minute of
    // short-term counts (the daily ledger is in usage_daily, fully logged).
    sql: `
      CREATE UNLOGGED TABLE rate_windows (
        account_id text NOT NULL,
        "window" text NOT NULL CHECK ("window" IN ('second', 'minute')),
        window_start bigint NOT NULL,
        count integer NOT NULL,
        PRIMARY KEY (account_id, "window", window_start)
      );
    `,
  },
];

/** One key for every replica, so that two of them starting together apply the migrations in turn. */
const MIGRATION_LOCK_KEY = 0x5347_6d69; // 'SGmi'

const UNIQUE_VIOLATION = '23505';

/** Restricted so the name can go into SQL and the connection's startup options without quoting. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

const KEY_COLUMNS = 'id, account_id, name, created_at, last_used_at, deleted_at';

const CONFLICT_COLUMNS: Readonly<Record<string, string>> = { accounts_name_unique: 'name', accounts_email_unique: 'email' };

function conflictOr(error: unknown): unknown {
  if (!(error instanceof pg.DatabaseError) || error.code !== UNIQUE_VIOLATION) return error;
  const column = error.constraint === undefined ? undefined : CONFLICT_COLUMNS[error.constraint];
  return column === undefined ? error : accountConflict(column);
}

export class PostgresStore implements AccountStore {
  /** Shared with PostgresRateWindows so both use one set of connections and the same schema. */
  readonly pool: pg.Pool;
  private readonly schema: string | undefined;
  private closed = false;

  constructor(options: PostgresStoreOptions) {
    if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
      throw new Error(`invalid schema name "${options.schema}": use lowercase letters, digits and underscores`);
    }
    this.schema = options.schema;
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      // Set at connection startup, so no query can ever run against another schema.
      ...(this.schema ? { options: `-c search_path=${this.schema}` } : {}),
    });
    // An idle connection the server drops must not crash the process; the pool replaces it.
    this.pool.on('error', () => undefined);
  }

  async migrate(): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      if (this.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.schema}`);
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
    });
    for (const migration of MIGRATIONS) {
      await inTransaction(this.pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
        const applied = await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
        if (applied.rowCount) return;
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  async createAccount(account: NewAccount, now: number): Promise<Account> {
    try {
      const { rows } = await this.pool.query<AccountRow>(
        `INSERT INTO accounts (id, name, email, daily_allowance, rate_per_second, rate_per_minute, password_hash, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
        [
          randomUUID(),
          account.name,
          normalizeEmail(account.email),
          account.dailyAllowance ?? null,
          account.ratePerSecond ?? null,
          account.ratePerMinute ?? null,
          account.passwordHash ?? null,
          now,
        ],
      );
      return toAccount(rows[0]!);
    } catch (error) {
      throw conflictOr(error);
    }
  }

  async listAccounts(): Promise<Account[]> {
    const { rows } = await this.pool.query<AccountRow>('SELECT * FROM accounts ORDER BY created_at, name');
    return rows.map(toAccount);
  }

  async findAccount(reference: string): Promise<Account | undefined> {
    // An id wins over a name, a name over an email, should one account's name be another's id.
    const { rows } = await this.pool.query<AccountRow>(
      `SELECT * FROM accounts WHERE id = $1 OR name = $1 OR email = lower($1)
       ORDER BY id = $1 DESC, name = $1 DESC LIMIT 1`,
      [reference],
    );
    return rows[0] && toAccount(rows[0]);
  }

  async findLogin(login: string): Promise<{ account: Account; passwordHash: string | null } | undefined> {
    const { rows } = await this.pool.query<AccountRow>(
      'SELECT * FROM accounts WHERE name = $1 OR email = lower($1) ORDER BY name = $1 DESC LIMIT 1',
      [login],
    );
    const row = rows[0];
    return row && { account: toAccount(row), passwordHash: row.password_hash };
  }

  async updateAccount(id: string, patch: AccountPatch): Promise<Account | undefined> {
    const assignments = patchAssignments(patch);
    if (assignments.length === 0) {
      const { rows } = await this.pool.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
      return rows[0] && toAccount(rows[0]);
    }
    try {
      const { rows } = await this.pool.query<AccountRow>(
        `UPDATE accounts SET ${assignments.map(([column], i) => `${column} = $${i + 2}`).join(', ')} WHERE id = $1 RETURNING *`,
        [id, ...assignments.map(([, value]) => value)],
      );
      return rows[0] && toAccount(rows[0]);
    } catch (error) {
      throw conflictOr(error);
    }
  }

  async insertKey(key: NewApiKey, now: number): Promise<ApiKeyRecord> {
    const { rows } = await this.pool.query<KeyRow>(
      `INSERT INTO api_keys (id, account_id, name, digest, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${KEY_COLUMNS}`,
      [key.id, key.accountId, key.name, key.digest, now],
    );
    return toKey(rows[0]!);
  }

  async listKeys({ accountId, includeDeleted = false }: { accountId?: string; includeDeleted?: boolean } = {}): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE ($1::text IS NULL OR account_id = $1) AND ($2::bool OR deleted_at IS NULL)
       ORDER BY created_at DESC, id DESC`,
      [accountId ?? null, includeDeleted],
    );
    return rows.map(toKey);
  }

  async deleteKey(id: string, now: number, accountId?: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE api_keys SET deleted_at = $2
       WHERE id = $1 AND deleted_at IS NULL AND ($3::text IS NULL OR account_id = $3)`,
      [id, now, accountId ?? null],
    );
    return rowCount === 1;
  }

  async findCredential(id: string): Promise<StoredCredential | undefined> {
    const { rows } = await this.pool.query<CredentialRow>({
      // Named, so each connection parses and plans it once: this runs on every request.
      name: 'searchgate-find-credential',
      text: `SELECT ${CREDENTIAL_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = $1`,
      values: [id],
    });
    return rows[0] && toCredential(rows[0]);
  }

  async touchKey(id: string, now: number): Promise<void> {
    // GREATEST: replicas touching the same key with slightly different clocks never move it back.
    await this.pool.query(
      'UPDATE api_keys SET last_used_at = GREATEST(COALESCE(last_used_at, 0), $2) WHERE id = $1',
      [id, now],
    );
  }

  async chargeDaily(accountId: string, day: string, units: number, limit: number): Promise<DailyCharge> {
    if (units <= limit) {
      // The row lock taken by ON CONFLICT makes the check and the increment one step for every
      // concurrent charge, whichever connection or replica it comes from.
      const { rows } = await this.pool.query<{ used: StoredNumber }>({
        name: 'searchgate-charge-daily',
        text: `INSERT INTO usage_daily (account_id, day, used) VALUES ($1, $2, $3)
               ON CONFLICT (account_id, day) DO UPDATE SET used = usage_daily.used + EXCLUDED.used
               WHERE usage_daily.used + EXCLUDED.used <= $4
               RETURNING used`,
        values: [accountId, day, units, limit],
      });
      if (rows[0]) return { granted: true, used: Number(rows[0].used) };
    }
    return { granted: false, used: usedThatDay(await this.usage(accountId, day, day)) };
  }

  async refundDaily(accountId: string, day: string, units: number): Promise<void> {
    await this.pool.query(
      'UPDATE usage_daily SET used = GREATEST(used - $3, 0) WHERE account_id = $1 AND day = $2',
      [accountId, day, units],
    );
  }

  async usage(accountId: string, fromDay: string, toDay: string): Promise<DailyUsage[]> {
    const { rows } = await this.pool.query<{ day: string; used: StoredNumber }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, used FROM usage_daily
       WHERE account_id = $1 AND day BETWEEN $2 AND $3 AND used > 0 ORDER BY usage_daily.day`,
      [accountId, fromDay, toDay],
    );
    return rows.map((row) => ({ day: row.day, used: Number(row.used) }));
  }

  async createSession(tokenDigest: string, session: Session, now: number): Promise<void> {
    // Sign-ins are rare, so expired sessions are cleared here (in the same round trip), not by a
    // write on every dashboard request; this also removes those that nobody looks up again.
    await this.pool.query(
      `WITH expired AS (DELETE FROM sessions WHERE expires_at <= $5)
       INSERT INTO sessions (token_digest, account_id, csrf_token, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)`,
      [tokenDigest, session.accountId, session.csrfToken, session.expiresAt, now],
    );
  }

  async findSession(tokenDigest: string, now: number): Promise<Session | undefined> {
    const { rows } = await this.pool.query<{ account_id: string; csrf_token: string; expires_at: StoredNumber }>(
      'SELECT account_id, csrf_token, expires_at FROM sessions WHERE token_digest = $1 AND expires_at > $2',
      [tokenDigest, now],
    );
    const row = rows[0];
    return row && { accountId: row.account_id, csrfToken: row.csrf_token, expiresAt: Number(row.expires_at) };
  }

  async deleteSession(tokenDigest: string): Promise<void> {
    await this.pool.query('DELETE FROM sessions WHERE token_digest = $1', [tokenDigest]);
  }
}

class FullWindows {
  constructor(
    readonly kinds: WindowKind[],
    /** The per-second window once the transaction is rolled back. */
    readonly perSecond: WindowState | null,
  ) {}
}

/** Window rows this old are over on every replica, even one whose clock is a minute behind. */
const RATE_ROW_RETENTION_MS = 120_000;
const RATE_PRUNE_INTERVAL_MS = 60_000;

/**
 * Rate windows in PostgreSQL, for replicas that share the database but no Redis. Uses the store's
 * pool (and so its schema); the rate_windows table comes with the store's migrations.
 */
export class PostgresRateWindows implements RateWindows {
  private readonly pool: pg.Pool;
  private lastPrunedAt = -Infinity;

  constructor(store: PostgresStore) {
    this.pool = store.pool;
  }

  async hit(accountId: string, limits: RateLimits, now: number): Promise<RateHit> {
    const windows = activeWindows(limits, now);
    if (windows.length === 0) return { refusal: undefined, perSecond: null };
    // Each window's row is incremented only while below its limit; a window missing from RETURNING
    // was full, and rolling back then uncounts the others, hence the transaction around one statement.
    // Rows are always locked second before minute, so concurrent hits on one account queue up instead
    // of deadlocking. The table being unlogged, the commit writes no WAL and so waits for no flush.
    const outcome = await inTransaction(this.pool, async (client): Promise<RateHit> => {
      const { rows } = await client.query<{ window: string; count: number }>({
        name: 'searchgate-rate-hit',
        text: `INSERT INTO rate_windows (account_id, "window", window_start, count)
               SELECT $1, w.kind, w.start, 1 FROM unnest($2::text[], $3::bigint[]) WITH ORDINALITY AS w (kind, start, position)
               ORDER BY w.position
               ON CONFLICT (account_id, "window", window_start) DO UPDATE SET count = rate_windows.count + 1
               WHERE rate_windows.count < CASE rate_windows."window" WHEN 'second' THEN $4::int ELSE $5::int END
               RETURNING "window", count`,
        values: [accountId, windows.map((w) => w.kind), windows.map((w) => w.start), limits.perSecond, limits.perMinute],
      });
      const counts = new Map(rows.map((row) => [row.window, row.count]));
      const full = windows.filter((w) => !counts.has(w.kind)).map((w) => w.kind);
      const second = counts.get('second');
      // Thrown so that inTransaction rolls back (a counted second then holds one less; a full one its limit); caught just below.
      if (full.length) throw new FullWindows(full, perSecondState(limits, second === undefined ? limits.perSecond : second - 1));
      return { refusal: undefined, perSecond: perSecondState(limits, second ?? 0) };
    }).catch((error: unknown) => {
      if (error instanceof FullWindows) return { refusal: refusalOf(error.kinds, limits, now), perSecond: error.perSecond };
      throw error;
    });
    this.pruneOccasionally(now);
    return outcome;
  }

  /**
   * Old windows are dropped at most once a minute per replica, without the request waiting for it:
   * no answer depends on the old rows, and a failure only postpones the pruning.
   */
  private pruneOccasionally(now: number): void {
    if (now - this.lastPrunedAt < RATE_PRUNE_INTERVAL_MS) return;
    this.lastPrunedAt = now;
    void this.pool
      .query('DELETE FROM rate_windows WHERE window_start < $1', [now - RATE_ROW_RETENTION_MS])
      .catch(() => undefined);
  }

  /** The pool belongs to the store, which closes it. */
  async close(): Promise<void> {}
}
