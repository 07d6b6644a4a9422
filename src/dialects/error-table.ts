/**
 * A vendor's error table (../shared/spec/dialects.md §7) as data: for each kind of failure, the
 * vendor's status where it differs from searchgate's and its canonical sentence where it has one,
 * plus whatever else the vendor's body carries (Exa's tag). One function then gives any dialect the
 * status, the message (R11: the vendor's sentence, then searchgate's reason) and the reason phrase.
 */
import type { ErrorKind } from '../api/errors.js';
import { reasonPhrase, vendorMessage } from './errors.js';
import type { DialectFailure } from './types.js';

export interface ErrorRow {
  /** The vendor's status for this kind of failure; searchgate's own when absent. */
  status?: number;
  /** The vendor's sentence, which searchgate's reason follows. */
  canonical?: string;
}

export type ErrorTable<Row extends ErrorRow = ErrorRow> = Partial<Record<ErrorKind, Row>>;

export interface TabledFailure<Row> {
  row: Row;
  status: number;
  message: string;
  /** The HTTP reason phrase: the standard one, then searchgate's reason. */
  reason: string;
}

/** A failure as the vendor's table words it. */
export function tabledFailure<Table extends ErrorTable>(table: Table, { error, kind }: DialectFailure): TabledFailure<Table[ErrorKind]> {
  const row = table[kind];
  const status = row?.status ?? error.status;
  const message = vendorMessage(row?.canonical, error);
  return { row, status, message, reason: reasonPhrase(status, error.message) };
}
