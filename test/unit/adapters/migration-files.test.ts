import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultMigrationsDirectory, readMigrationFiles } from '../../../libs/adapters/postgres/index.js';

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'tg-migrations-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('readMigrationFiles', () => {
  it('orders by numeric version and ignores files that are not .sql', () => {
    const dir = dirWith({
      '010_audit.sql': 'c',
      '002_b.sql': 'b',
      '1000_late.sql': 'd',
      '001_a.sql': 'a',
      'README.md': '',
    });
    expect(readMigrationFiles(dir).map((f) => [f.version, f.name])).toEqual([
      [1, '001_a.sql'],
      [2, '002_b.sql'],
      [10, '010_audit.sql'],
      [1000, '1000_late.sql'],
    ]);
  });

  it('fingerprints contents: the checksum changes when the text does', () => {
    const one = readMigrationFiles(dirWith({ '001_a.sql': 'CREATE TABLE a ();' }))[0]!;
    const two = readMigrationFiles(dirWith({ '001_a.sql': 'CREATE TABLE a (x int);' }))[0]!;
    expect(one.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(one.checksum).not.toBe(two.checksum);
  });

  it.each(['1_short.sql', '001-dash.sql', '001_Upper.sql', 'audit.sql'])(
    'refuses the misnamed %s',
    (name) => {
      expect(() => readMigrationFiles(dirWith({ [name]: '' }))).toThrow(/NNN_lowercase_name\.sql/);
    },
  );

  it('refuses two files with one version', () => {
    expect(() => readMigrationFiles(dirWith({ '003_a.sql': '', '003_b.sql': '' }))).toThrow(
      /share version 3/,
    );
  });

  it('finds the shipped migrations, starting with idempotency and rate limits', () => {
    const dir = defaultMigrationsDirectory();
    expect(readdirSync(dir)).toEqual(expect.arrayContaining(['001_idempotency.sql', '002_rate_limit.sql']));
    expect(
      readMigrationFiles(dir)
        .slice(0, 2)
        .map((f) => f.name),
    ).toEqual(['001_idempotency.sql', '002_rate_limit.sql']);
  });
});
