import { randomBytes } from 'node:crypto';
import test from 'ava';
import pg from 'pg';
import { PostgresStore } from '../../src/state/postgres.js';
import { storeContract } from '../helpers/store-contract.js';

const url = process.env.SEARCHGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Each store gets its own schema, so tests running at once never see each other's rows. */
const schemas: string[] = [];
function freshSchema() {
  const schema = `sg_test_${randomBytes(6).toString('hex')}`;
  schemas.push(schema);
  return schema;
}

test.after.always(async () => {
  const pool = new pg.Pool({ connectionString: url });
  for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool.end();
});

storeContract(test, 'postgres', async () => new PostgresStore({ url, schema: freshSchema() }));

test('postgres: two replicas migrating at once apply each migration exactly once, into their schema', async (t) => {
  const schema = freshSchema();
  const replicas = [new PostgresStore({ url, schema }), new PostgresStore({ url, schema })] as const;
  t.teardown(() => Promise.all(replicas.map((replica) => replica.close())));
  await Promise.all(replicas.map((replica) => replica.migrate()));

  const { rows: migrations } = await replicas[0].pool.query('SELECT version, name FROM schema_migrations ORDER BY version');
  t.deepEqual(migrations, [
    { version: 1, name: 'accounts, keys, usage, sessions' },
    { version: 2, name: 'rate windows' },
  ]);
  const { rows: tables } = await replicas[0].pool.query(
    'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
    [schema],
  );
  t.deepEqual(
    tables.map((row) => row.table_name),
    ['accounts', 'api_keys', 'rate_windows', 'schema_migrations', 'sessions', 'usage_daily'],
  );
  const account = await replicas[0].createAccount({ name: 'alice' }, 0);
  t.deepEqual(await replicas[1].findAccount('alice'), account, 'both replicas see one database');
});

test('postgres: a schema name that would need quoting is refused', (t) => {
  t.throws(() => new PostgresStore({ url, schema: 'x; DROP TABLE accounts' }), { message: /invalid schema name/ });
});
