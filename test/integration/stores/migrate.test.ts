import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  defaultMigrationsDirectory,
  migrate,
  readMigrationFiles,
} from '../../../libs/adapters/postgres/index.js';
import { DATABASE_URL } from '../../helpers/env.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';

const schemas: TestSchema[] = [];
async function schema(): Promise<TestSchema> {
  const s = await createTestSchema('migrate');
  schemas.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(schemas.splice(0).map((s) => s.drop()));
});

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'tg-migrate-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function tablesIn(pool: pg.Pool, schemaName: string): Promise<string[]> {
  const { rows } = await pool.query<{ table_name: string }>(
    'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
    [schemaName],
  );
  return rows.map((r) => r.table_name);
}

async function recorded(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY version');
  return rows.map((r) => r.name);
}

describe('migrate', () => {
  it('applies every shipped migration, in order, into the schema the pool points at; then nothing', async () => {
    const s = await schema();
    const shipped = readMigrationFiles(defaultMigrationsDirectory()).map((f) => f.name);
    expect((await migrate(s.pool)).applied).toEqual(shipped);
    expect(await recorded(s.pool)).toEqual(shipped);
    expect(await tablesIn(s.pool, s.schema)).toEqual(
      expect.arrayContaining(['idempotency_keys', 'rate_limit_buckets', 'schema_migrations']),
    );
    expect((await migrate(s.pool)).applied).toEqual([]);
  });

  it('applies each file exactly once when several processes migrate one schema at the same time', async () => {
    const s = await schema();
    // Without mutual exclusion the second CREATE TABLE (no IF NOT EXISTS) or the second
    // schema_migrations row would fail; the sleep keeps the race window wide open.
    const dir = dirWith({
      '001_first.sql': 'CREATE TABLE first_table (id int PRIMARY KEY); SELECT pg_sleep(0.2);',
      '002_second.sql': 'CREATE TABLE second_table (id int PRIMARY KEY);',
    });
    const other = new pg.Pool({
      connectionString: DATABASE_URL,
      max: 4,
      options: `-c search_path="${s.schema}"`,
    });
    try {
      const runs = await Promise.all([
        migrate(s.pool, { directory: dir }),
        migrate(other, { directory: dir }),
        migrate(s.pool, { directory: dir }),
        migrate(other, { directory: dir }),
      ]);
      expect(runs.flatMap((r) => r.applied).sort()).toEqual(['001_first.sql', '002_second.sql']);
      expect(await recorded(s.pool)).toEqual(['001_first.sql', '002_second.sql']);
    } finally {
      await other.end();
    }
  });

  it('rolls a failing file back completely, keeps earlier ones, and applies it once fixed', async () => {
    const s = await schema();
    const dir = dirWith({
      '001_ok.sql': 'CREATE TABLE ok_table (id int);',
      '002_broken.sql': 'CREATE TABLE half_table (id int); SELECT 1 / 0;',
      '003_after.sql': 'CREATE TABLE after_table (id int);',
    });
    await expect(migrate(s.pool, { directory: dir })).rejects.toThrow(
      /002_broken\.sql failed: division by zero/,
    );
    expect(await recorded(s.pool)).toEqual(['001_ok.sql']);
    expect(await tablesIn(s.pool, s.schema)).toEqual(['ok_table', 'schema_migrations']);

    writeFileSync(join(dir, '002_broken.sql'), 'CREATE TABLE half_table (id int);');
    expect((await migrate(s.pool, { directory: dir })).applied).toEqual(['002_broken.sql', '003_after.sql']);
  });

  it('refuses to go on when an applied file was edited', async () => {
    const s = await schema();
    const dir = dirWith({ '001_a.sql': 'CREATE TABLE a_table (id int);' });
    await migrate(s.pool, { directory: dir });
    writeFileSync(join(dir, '001_a.sql'), 'CREATE TABLE a_table (id bigint);');
    writeFileSync(join(dir, '002_b.sql'), 'CREATE TABLE b_table (id int);');
    await expect(migrate(s.pool, { directory: dir })).rejects.toThrow(
      /001_a\.sql was applied .* different contents/,
    );
    expect(await recorded(s.pool)).toEqual(['001_a.sql']);
  });

  it('applies a lower-numbered file added after higher ones were applied', async () => {
    const s = await schema();
    const dir = dirWith({
      '001_a.sql': 'CREATE TABLE a_table (id int);',
      '010_c.sql': 'CREATE TABLE c_table (id int);',
    });
    await migrate(s.pool, { directory: dir });
    writeFileSync(join(dir, '005_b.sql'), 'CREATE TABLE b_table (id int);');
    expect((await migrate(s.pool, { directory: dir })).applied).toEqual(['005_b.sql']);
    expect(await recorded(s.pool)).toEqual(['001_a.sql', '005_b.sql', '010_c.sql']);
  });

  it('keeps schemas apart: migrating one leaves another untouched', async () => {
    const one = await schema();
    const two = await schema();
    await migrate(one.pool);
    expect(await tablesIn(two.pool, two.schema)).toEqual([]);
  });
});
