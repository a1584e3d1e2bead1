import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveAsset } from '../memory/asset-path.js';

/** One versioned, forward-only migration: `NNN_name.sql`, applied once, in version order. */
export interface MigrationFile {
  readonly version: number;
  /** The file name, e.g. `001_idempotency.sql`; recorded in schema_migrations. */
  readonly name: string;
  readonly sql: string;
  /** SHA-256 of the file's text: an applied migration whose file later changed is refused. */
  readonly checksum: string;
}

const MIGRATION_NAME = /^(\d{3,9})_([a-z0-9_]+)\.sql$/;

/**
 * The migrations/ folder beside this module: libs/adapters/postgres/migrations under tsx, and the
 * same source folder for compiled output that did not copy it (see resolveAsset).
 */
export function defaultMigrationsDirectory(): string {
  return resolveAsset('./migrations/', import.meta.url);
}

/**
 * Reads every `NNN_name.sql` in `directory`, sorted by version. Throws on a `.sql` file whose name
 * does not follow the pattern (it would otherwise be silently skipped) and on two files sharing a
 * version. Other files (notes, READMEs) are ignored.
 */
export function readMigrationFiles(directory: string): MigrationFile[] {
  const files: MigrationFile[] = [];
  for (const name of readdirSync(directory)) {
    if (!name.endsWith('.sql')) continue;
    const match = MIGRATION_NAME.exec(name);
    if (match === null) {
      throw new Error(`migration file ${name} must be named NNN_lowercase_name.sql (e.g. 010_audit.sql)`);
    }
    const sql = readFileSync(join(directory, name), 'utf8');
    files.push({
      version: Number(match[1]),
      name,
      sql,
      checksum: createHash('sha256').update(sql).digest('hex'),
    });
  }
  files.sort((a, b) => a.version - b.version);
  for (let i = 1; i < files.length; i += 1) {
    if (files[i]!.version === files[i - 1]!.version) {
      throw new Error(
        `migrations ${files[i - 1]!.name} and ${files[i]!.name} share version ${files[i]!.version}`,
      );
    }
  }
  return files;
}
