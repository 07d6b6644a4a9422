/**
 * `searchgate accounts …` and `searchgate keys …`: the operator's side of accounts, against the same
 * store the gateway uses (the config's `accounts` section). Every command takes --json for scripts;
 * exit status 0 on success, 1 when the account or key does not exist or the name is taken, 2 for
 * usage errors, 78 for an invalid config.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/load.js';
import { AccountService, MIN_PASSWORD_LENGTH, hashPassword, keyPrefix, parseStoredKey } from '../state/accounts.js';
import { accountPolicy, openAccountState } from '../state/open.js';
import { StoreConflictError, type Account, type AccountStore, type ApiKeyRecord } from '../state/store.js';
import { UsageError, integerOption, isUsageError, usageFailure } from './args.js';

const ACCOUNTS_USAGE = `usage: searchgate accounts <command> [--json]

  create <name> [--email E] [--allowance N] [--rate-per-second N] [--rate-per-minute N] [--password-stdin]
  list
  disable <account>               refuse every key of the account with 403 (enable undoes it)
  enable <account>
  set-allowance <account> <N|default>   units per UTC day
  set-password <account>          reads the dashboard password from the first line of stdin

<account> is an account's name, email or id. Limits left out use the config's accounts.defaults.`;

const KEYS_USAGE = `usage: searchgate keys <command> [--json]

  create <account> [--name N]     prints the new key once: it is stored only as a hash
  list [--account A] [--all]      --all includes deleted keys
  delete <key id or sg_ prefix>   the key is refused at once, on every replica`;

class NotFoundError extends Error {}

interface Output {
  print(human: string, data: unknown): void;
}

function output(json: boolean): Output {
  return { print: (human, data) => process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`) };
}

/** Opens the configured store, runs the migrations, and always closes it. */
async function withAccounts<T>(run: (accounts: AccountService, store: AccountStore) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env);
  const { store, windows } = openAccountState(config.accounts);
  try {
    await store.migrate();
    const accounts = new AccountService(store, windows, accountPolicy(config.accounts), Date.now);
    return await run(accounts, store);
  } finally {
    await Promise.allSettled([windows.close(), store.close()]);
  }
}

async function runCommand(usage: string, argv: string[], handlers: Record<string, (args: ParsedArgs, out: Output) => Promise<void>>): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${usage}\n`);
    return command === undefined ? 2 : 0;
  }
  const handler = handlers[command];
  try {
    if (!handler) throw new UsageError(`unknown command "${command}"`);
    const args = parse(rest);
    await handler(args, output(args.values.json === true));
    return 0;
  } catch (error) {
    if (isUsageError(error)) return usageFailure('searchgate', error.message, usage);
    if (error instanceof ConfigError) {
      process.stderr.write(`searchgate: invalid configuration: ${error.message}\n`);
      return 78;
    }
    if (error instanceof NotFoundError || error instanceof StoreConflictError) {
      process.stderr.write(`searchgate: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

const OPTIONS = {
  json: { type: 'boolean' },
  email: { type: 'string' },
  allowance: { type: 'string' },
  'rate-per-second': { type: 'string' },
  'rate-per-minute': { type: 'string' },
  'password-stdin': { type: 'boolean' },
  name: { type: 'string' },
  account: { type: 'string' },
  all: { type: 'boolean' },
} as const;

type ParsedArgs = ReturnType<typeof parse>;
const parse = (argv: string[]) => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });

function positional(args: ParsedArgs, index: number, what: string): string {
  const value = args.positionals[index];
  if (value === undefined) throw new UsageError(`missing ${what}`);
  return value;
}

function count(value: string | undefined, option: string): number | undefined {
  return integerOption(value, option, 0, 'a whole number');
}

async function readPassword(): Promise<string> {
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    lines.close();
    if (line.length < MIN_PASSWORD_LENGTH) throw new UsageError(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
    return line;
  }
  throw new UsageError('--password-stdin: nothing was read from stdin');
}

async function requireAccount(store: AccountStore, reference: string): Promise<Account> {
  const account = await store.findAccount(reference);
  if (!account) throw new NotFoundError(`no account "${reference}"`);
  return account;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

function accountView(account: Account, accounts: AccountService) {
  const limits = accounts.limitsOf(account);
  return {
    id: account.id,
    name: account.name,
    email: account.email,
    status: account.status,
    dailyAllowance: limits.dailyAllowance,
    ratePerSecond: limits.perSecond,
    ratePerMinute: limits.perMinute,
    createdAt: iso(account.createdAt),
  };
}

const keyView = (key: ApiKeyRecord, accountName?: string) => ({
  id: key.id,
  prefix: keyPrefix(key.id),
  name: key.name,
  ...(accountName !== undefined ? { account: accountName } : {}),
  createdAt: iso(key.createdAt),
  lastUsedAt: key.lastUsedAt === null ? null : iso(key.lastUsedAt),
  deletedAt: key.deletedAt === null ? null : iso(key.deletedAt),
});

function table(rows: Array<Record<string, unknown>>): string {
  if (rows.length === 0) return '(none)';
  const columns = Object.keys(rows[0]!);
  const cell = (value: unknown) => (value === null || value === undefined ? '-' : String(value));
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => cell(row[column]).length)));
  const line = (values: string[]) => values.map((value, i) => value.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(columns), ...rows.map((row) => line(columns.map((column) => cell(row[column]))))].join('\n');
}

async function setStatus(args: ParsedArgs, out: Output, status: 'active' | 'disabled') {
  await withAccounts(async (accounts, store) => {
    const account = await requireAccount(store, positional(args, 0, '<account>'));
    const updated = (await store.updateAccount(account.id, { status }))!;
    out.print(`account ${updated.name} is ${status}`, accountView(updated, accounts));
  });
}

export function accountsMain(argv: string[]): Promise<number> {
  return runCommand(ACCOUNTS_USAGE, argv, {
    async create(args, out) {
      const name = positional(args, 0, '<name>');
      const password = args.values['password-stdin'] ? await readPassword() : undefined;
      await withAccounts(async (accounts, store) => {
        const account = await store.createAccount(
          {
            name,
            email: args.values.email ?? null,
            dailyAllowance: count(args.values.allowance, '--allowance') ?? null,
            ratePerSecond: count(args.values['rate-per-second'], '--rate-per-second') ?? null,
            ratePerMinute: count(args.values['rate-per-minute'], '--rate-per-minute') ?? null,
            passwordHash: password === undefined ? null : await hashPassword(password),
          },
          Date.now(),
        );
        out.print(`created account ${account.name} (${account.id})`, accountView(account, accounts));
      });
    },
    async list(_args, out) {
      await withAccounts(async (accounts, store) => {
        const rows = (await store.listAccounts()).map((account) => accountView(account, accounts));
        out.print(table(rows), rows);
      });
    },
    disable: (args, out) => setStatus(args, out, 'disabled'),
    enable: (args, out) => setStatus(args, out, 'active'),
    async 'set-allowance'(args, out) {
      const reference = positional(args, 0, '<account>');
      const value = positional(args, 1, '<N|default>');
      const allowance = value === 'default' ? null : count(value, '<N>')!;
      await withAccounts(async (accounts, store) => {
        const account = await requireAccount(store, reference);
        const updated = (await store.updateAccount(account.id, { dailyAllowance: allowance }))!;
        out.print(`account ${updated.name}: ${accounts.limitsOf(updated).dailyAllowance} units per UTC day`, accountView(updated, accounts));
      });
    },
    async 'set-password'(args, out) {
      const reference = positional(args, 0, '<account>');
      const password = await readPassword();
      await withAccounts(async (accounts, store) => {
        const account = await requireAccount(store, reference);
        const updated = (await store.updateAccount(account.id, { passwordHash: await hashPassword(password) }))!;
        out.print(`account ${updated.name}: password set`, accountView(updated, accounts));
      });
    },
  });
}

export function keysMain(argv: string[]): Promise<number> {
  return runCommand(KEYS_USAGE, argv, {
    async create(args, out) {
      const reference = positional(args, 0, '<account>');
      await withAccounts(async (accounts, store) => {
        const account = await requireAccount(store, reference);
        const { key, record } = await accounts.createKey(account.id, args.values.name ?? 'default');
        out.print(
          `${key}\n\nThis is the only time the key is shown: it is stored as a hash. Key ${keyPrefix(record.id)} for account ${account.name}.`,
          { key, ...keyView(record, account.name) },
        );
      });
    },
    async list(args, out) {
      await withAccounts(async (_accounts, store) => {
        const account = args.values.account === undefined ? undefined : await requireAccount(store, args.values.account);
        const names = new Map((await store.listAccounts()).map((entry) => [entry.id, entry.name]));
        const keys = await store.listKeys({ ...(account ? { accountId: account.id } : {}), includeDeleted: args.values.all === true });
        const rows = keys.map((key) => keyView(key, names.get(key.accountId)));
        out.print(table(rows), rows);
      });
    },
    async delete(args, out) {
      const reference = positional(args, 0, '<key id or prefix>');
      // parseStoredKey knows only whole keys; operators mostly paste the visible sg_<id> prefix.
      const id = parseStoredKey(reference) ?? reference.replace(/^sg_/, '');
      await withAccounts(async (_accounts, store) => {
        if (!(await store.deleteKey(id, Date.now()))) throw new NotFoundError(`no live key "${reference}"`);
        out.print(`deleted key ${keyPrefix(id)}`, { id, prefix: keyPrefix(id), deleted: true });
      });
    },
  });
}
