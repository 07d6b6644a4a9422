/**
 * The rows both account stores read (the same tables and columns in SQLite and PostgreSQL) and how
 * they become the store's types, so that the two stores differ only in their SQL.
 */
import { StoreConflictError, type Account, type AccountPatch, type AccountStatus, type ApiKeyRecord, type StoredCredential } from './store.js';

/** pg hands bigint columns back as strings (they may exceed 2^53); ours are epoch ms and unit counts. */
export type StoredNumber = number | string;

const toNullableNumber = (value: StoredNumber | null) => (value === null ? null : Number(value));

export interface AccountRow {
  id: string;
  name: string;
  email: string | null;
  status: AccountStatus;
  daily_allowance: number | null;
  rate_per_second: number | null;
  rate_per_minute: number | null;
  password_hash: string | null;
  created_at: StoredNumber;
}

export interface KeyRow {
  id: string;
  account_id: string;
  name: string;
  created_at: StoredNumber;
  last_used_at: StoredNumber | null;
  deleted_at: StoredNumber | null;
}

/** The account's columns with the key's beside them, aliased where both tables have one (id, name, created_at). */
export const CREDENTIAL_COLUMNS = 'k.id AS key_id, k.name AS key_name, k.digest, k.created_at AS key_created_at, k.last_used_at, k.deleted_at, a.*';

export interface CredentialRow extends AccountRow {
  key_id: string;
  key_name: string;
  digest: Buffer;
  key_created_at: StoredNumber;
  last_used_at: StoredNumber | null;
  deleted_at: StoredNumber | null;
}

export const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  email: row.email,
  status: row.status,
  dailyAllowance: row.daily_allowance,
  ratePerSecond: row.rate_per_second,
  ratePerMinute: row.rate_per_minute,
  createdAt: Number(row.created_at),
});

export const toKey = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  createdAt: Number(row.created_at),
  lastUsedAt: toNullableNumber(row.last_used_at),
  deletedAt: toNullableNumber(row.deleted_at),
});

export const toCredential = (row: CredentialRow): StoredCredential => ({
  key: toKey({ id: row.key_id, account_id: row.id, name: row.key_name, created_at: row.key_created_at, last_used_at: row.last_used_at, deleted_at: row.deleted_at }),
  digest: row.digest,
  account: toAccount(row),
});

const PATCH_COLUMNS = {
  email: 'email',
  status: 'status',
  dailyAllowance: 'daily_allowance',
  ratePerSecond: 'rate_per_second',
  ratePerMinute: 'rate_per_minute',
  passwordHash: 'password_hash',
} as const satisfies Record<keyof AccountPatch, string>;

/** Emails compare case-insensitively; storing them lowercased lets a plain unique index enforce that. */
export const normalizeEmail = (email: string | null | undefined) => (email == null ? null : email.toLowerCase());

/**
 * The columns an update sets, with the values to store. A field left undefined is not part of the
 * patch, whereas null clears the column.
 */
export function patchAssignments(patch: AccountPatch): Array<[column: string, value: unknown]> {
  return (Object.keys(PATCH_COLUMNS) as Array<keyof AccountPatch>)
    .filter((field) => patch[field] !== undefined)
    .map((field) => [PATCH_COLUMNS[field], field === 'email' ? normalizeEmail(patch.email) : patch[field]]);
}

/** Worded once for both stores: the CLI and the dashboard show it to the operator as it is. */
export const accountConflict = (column: string) => new StoreConflictError(`an account with this ${column} already exists`);
