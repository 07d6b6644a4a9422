import test from 'ava';
import { PostgresStore } from '../../src/state/postgres.js';
import { POSTGRES_URL, testSchemas } from '../helpers/databases.js';
import { storeContract } from '../helpers/store-contract.js';

const schemas = testSchemas();
test.after.always(() => schemas.dropAll());

storeContract(test, 'postgres', async () => new PostgresStore({ url: POSTGRES_URL, schema: schemas.fresh() }));

test('postgres: two replicas migrating at once apply each migration exactly once, into their schema', async (t) => {
  const schema = schemas.fresh();
  const replicas = [new PostgresStore({ url: POSTGRES_URL, schema }), new PostgresStore({ url: POSTGRES_URL, schema })] as const;
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
  t.throws(() => new PostgresStore({ url: POSTGRES_URL, schema: 'x; DROP TABLE accounts' }), { message: /invalid schema name/ });
});
