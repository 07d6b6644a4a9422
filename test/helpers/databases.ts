/**
 * The PostgreSQL and Redis the state tests run against (the local ones .ci/run starts, unless
 * SEARCHGATE_TEST_POSTGRES_URL / SEARCHGATE_TEST_REDIS_URL name others), and throwaway schemas in
 * that PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const POSTGRES_URL = process.env.SEARCHGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.SEARCHGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Schemas for one test file: each `fresh()` is a new random name, so that tests running at once never
 * see each other's rows; `dropAll` removes every one made so far with all it holds (hook it to
 * test.after.always, as a store may be opened in the middle of any test).
 */
export function testSchemas() {
  const made: string[] = [];
  return {
    fresh(): string {
      const schema = `sg_test_${randomBytes(6).toString('hex')}`;
      made.push(schema);
      return schema;
    },
    async dropAll(): Promise<void> {
      const pool = new pg.Pool({ connectionString: POSTGRES_URL });
      try {
        for (const schema of made.splice(0)) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await pool.end();
      }
    },
  };
}
