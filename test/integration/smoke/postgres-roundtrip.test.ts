import { describe, expect, it } from 'vitest';
import type { TestSchema } from '../../helpers/postgres.js';
import { createTestSchema } from '../../helpers/postgres.js';
import { openForSuite } from '../../helpers/stack-lifecycle.js';

describe('postgres: round trip', () => {
  let db: TestSchema;
  openForSuite(async () => (db = await createTestSchema('smoke_pg')), { close: (d) => d.drop() });

  it('writes rows in the test schema and reads them back', async () => {
    await db.pool.query(
      'CREATE TABLE calls (id text PRIMARY KEY, args jsonb NOT NULL, at timestamptz NOT NULL)',
    );
    const at = new Date('2026-01-02T03:04:05.678Z');
    await db.pool.query('INSERT INTO calls (id, args, at) VALUES ($1, $2, $3), ($4, $5, $6)', [
      'c-1',
      { sku: 'SKU-7', qty: 2 },
      at,
      'c-2',
      { sku: 'SKU-8', qty: 1 },
      at,
    ]);
    const { rows } = await db.pool.query<{ id: string; args: unknown; at: Date }>(
      'SELECT id, args, at FROM calls ORDER BY id',
    );
    expect(rows).toEqual([
      { id: 'c-1', args: { sku: 'SKU-7', qty: 2 }, at },
      { id: 'c-2', args: { sku: 'SKU-8', qty: 1 }, at },
    ]);
    // The table exists only in this test's schema.
    const where = await db.pool.query<{ table_schema: string }>(
      "SELECT table_schema FROM information_schema.tables WHERE table_name = 'calls' AND table_schema = $1",
      [db.schema],
    );
    expect(where.rows).toEqual([{ table_schema: db.schema }]);
  });
});
