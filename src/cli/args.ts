/**
 * What the CLI commands share about their arguments: one kind of usage error, recognised whether a
 * command threw it or node:util's parseArgs did, and one strict reading of integer options.
 */

/** Bad arguments: the command prints its usage text and exits with EXIT_USAGE. */
export class UsageError extends Error {}

/** Exit status for bad arguments, as shells' own builtins use it. */
export const EXIT_USAGE = 2;

/** parseArgs reports unknown options and missing values with ERR_PARSE_ARGS_* codes, not its own class. */
export function isUsageError(error: unknown): error is Error {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'));
}

/** Writes `<command>: <message>` and the usage text to stderr; returns the exit status. */
export function usageFailure(command: string, message: string, usage: string): number {
  process.stderr.write(`${command}: ${message}\n${usage}\n`);
  return EXIT_USAGE;
}

/**
 * Digits only: Number() alone would take "", " 7", "1e3" and "0x10", so a typo could become a
 * silently different limit.
 */
export function integerOption(value: string | undefined, name: string, minimum: number, expected = `an integer ≥ ${minimum}`): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < minimum) throw new UsageError(`${name} must be ${expected}, not "${value}"`);
  return number;
}
