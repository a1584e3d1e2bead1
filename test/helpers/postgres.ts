import pg from 'pg';
import { DATABASE_URL } from './env.js';
import { uniqueName } from './names.js';

export interface TestSchema {
  /** A pool whose connections all have `search_path` set to the test's own schema. */
  readonly pool: pg.Pool;
  readonly schema: string;
  /** Ends the pool. The schema is left behind on purpose (names never repeat); drop it with `drop`. */
  close(): Promise<void>;
  drop(): Promise<void>;
}

/**
 * A fresh Postgres schema for one test file, so tests can run repeatedly and in parallel without
 * clean-up. Tables created through `pool` land in that schema.
 */
export async function createTestSchema(prefix = 'tg'): Promise<TestSchema> {
  const schema = uniqueName(prefix);
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
  } finally {
    await admin.end();
  }
  const pool = new pg.Pool({
    connectionString: DATABASE_URL,
    max: 10,
    options: `-c search_path="${schema}"`,
  });
  return {
    pool,
    schema,
    close: () => pool.end(),
    async drop() {
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
