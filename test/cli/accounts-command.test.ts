/**
 * `searchgate accounts|keys` as an operator scripts them, against the same SQLite file a running
 * gateway uses: what the CLI does is seen by the gateway at once.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { PostgresStore } from '../../src/state/postgres.js';
import { runCli } from '../helpers/cli.js';
import { searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig } from '../helpers/gateway.js';

const cli = (configPath: string, args: string[], stdin?: string) => runCli(args, { env: { SEARCHGATE_CONFIG: configPath }, stdin });

async function setup(t: ExecutionContext) {
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-accounts-cli-'));
  const database = join(directory, 'accounts.db');
  const configPath = join(directory, 'config.yaml');
  writeFileSync(configPath, `accounts:\n  embedded: { path: ${database} }\n  defaults: { ratePerSecond: 0, ratePerMinute: 0 }\n`);
  const upstream = await startUpstream((_request, res) => sendJson(res, 200, searchEnvelope([])));
  const gateway = await startGateway({
    ...upstreamConfig(upstream.url),
    accounts: { embedded: { path: database }, defaults: { ratePerSecond: 0, ratePerMinute: 0 } },
  });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  const search = (key: string) => gateway.post('/v1/web-search', { query: 'q' }, { authorization: `Bearer ${key}` });
  return { run: (args: string[], stdin?: string) => cli(configPath, args, stdin), search };
}

test('accounts and keys made by the CLI work on a running gateway at once: create, use, delete, disable, set-allowance', async (t) => {
  t.timeout(180_000, 'a dozen CLI processes, one after another');
  const { run, search } = await setup(t);
  const created = await run(['accounts', 'create', 'acme', '--email', 'Ops@Acme.example', '--allowance', '5', '--password-stdin', '--json'], 'a long passphrase\n');
  t.is(created.code, 0, created.stderr);
  t.like(JSON.parse(created.stdout), { name: 'acme', email: 'ops@acme.example', status: 'active', dailyAllowance: 5, ratePerSecond: 0 });

  const keyRun = await run(['keys', 'create', 'acme', '--name', 'ci', '--json']);
  t.is(keyRun.code, 0, keyRun.stderr);
  const { key, prefix } = JSON.parse(keyRun.stdout) as { key: string; prefix: string };
  t.regex(key, /^sg_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  t.true(key.startsWith(`${prefix}_`));

  const first = await search(key);
  t.is(first.status, 200);
  t.is(first.headers.get('x-ratelimit-limit'), '5');

  const listed = await run(['keys', 'list', '--account', 'ops@acme.example', '--json']);
  const keys = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
  t.is(keys.length, 1);
  t.like(keys[0], { prefix, name: 'ci', account: 'acme', deletedAt: null });
  t.false(listed.stdout.includes(key), 'the list never shows the secret');

  t.is((await run(['accounts', 'set-allowance', 'acme', '9'])).code, 0);
  t.is((await search(key)).headers.get('x-ratelimit-limit'), '9');

  t.is((await run(['accounts', 'disable', 'acme'])).code, 0);
  t.is((await search(key)).status, 403);
  t.is((await run(['accounts', 'enable', 'acme'])).code, 0);
  t.is((await search(key)).status, 200);

  const deleted = await run(['keys', 'delete', prefix, '--json']);
  t.is(deleted.code, 0, deleted.stderr);
  t.like(JSON.parse(deleted.stdout), { prefix, deleted: true });
  t.is((await search(key)).status, 401);
  t.is((await run(['keys', 'delete', prefix])).code, 1, 'a key is deleted once');
  t.is(JSON.parse((await run(['keys', 'list', '--all', '--json'])).stdout).length, 1, '--all shows the deleted key');
});

test('human output is a table; mistakes exit 1 or 2 with a message and no stack trace', async (t) => {
  t.timeout(180_000, 'a dozen CLI processes');
  const { run } = await setup(t);
  t.is((await run(['accounts', 'create', 'acme'])).code, 0);
  const table = await run(['accounts', 'list']);
  t.regex(table.stdout, /^id\s+name\s+email\s+status\s+dailyAllowance/);
  t.regex(table.stdout, /acme\s+-\s+active\s+1000/);

  const cases: Array<[string[], number, RegExp]> = [
    [['accounts', 'create', 'acme'], 1, /an account with this name already exists/],
    [['accounts', 'disable', 'nobody'], 1, /no account "nobody"/],
    [['keys', 'create', 'nobody'], 1, /no account "nobody"/],
    [['keys', 'delete', 'sg_000000000000'], 1, /no live key/],
    [['accounts', 'set-allowance', 'acme', 'lots'], 2, /must be a whole number/],
    [['accounts', 'create'], 2, /missing <name>/],
    [['accounts', 'frobnicate'], 2, /unknown command "frobnicate"/],
    [['keys', 'list', '--colour'], 2, /Unknown option '--colour'/],
    [['accounts', 'set-password', 'acme'], 2, /nothing was read from stdin/],
  ];
  const results = await Promise.all(cases.map(([args]) => run(args)));
  for (const [i, [args, code, message]] of cases.entries()) {
    const result = results[i]!;
    t.is(result.code, code, args.join(' '));
    t.regex(result.stderr, message, args.join(' '));
    t.false(/\n\s+at /.test(result.stderr), 'no stack trace');
  }
  const short = await run(['accounts', 'set-password', 'acme'], 'short\n');
  t.regex(short.stderr, /at least 10 characters/);
});

test('with accounts.store: postgres the CLI runs the migrations and writes to PostgreSQL', async (t) => {
  const url = process.env.SEARCHGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `sg_cli_${randomBytes(4).toString('hex')}`;
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-accounts-cli-pg-'));
  const configPath = join(directory, 'config.yaml');
  writeFileSync(configPath, `accounts:\n  store: postgres\n  postgres: { url: "${url}", schema: ${schema} }\n`);
  const store = new PostgresStore({ url, schema });
  t.teardown(async () => {
    await store.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await store.close();
  });
  const created = await cli(configPath, ['accounts', 'create', 'pg-acme', '--json']);
  t.is(created.code, 0, created.stderr);
  const keyRun = await cli(configPath, ['keys', 'create', 'pg-acme', '--json']);
  const { id } = JSON.parse(keyRun.stdout) as { id: string };
  const credential = await store.findCredential(id);
  t.is(credential?.account.name, 'pg-acme');
});
