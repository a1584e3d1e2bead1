import type pg from 'pg';
import { defaultMigrationsDirectory, readMigrationFiles, type MigrationFile } from './migration-files.js';

/** Where {@link migrate} reads its files from. */
export interface MigrateOptions {
  /** Folder of `NNN_name.sql` files. Default: the migrations/ folder shipped beside this module. */
  readonly directory?: string;
}

/** What one {@link migrate} call did. */
export interface MigrateResult {
  /** File names applied by this call, in order (empty when the schema was already current). */
  readonly applied: readonly string[];
}

/** First half of the advisory-lock key; the second half is the hashed schema name. */
const LOCK_NAMESPACE = "hashtext('toolgate.schema_migrations')";
const LOCK = `SELECT pg_advisory_xact_lock(${LOCK_NAMESPACE}, hashtext(coalesce(current_schema(), '')))`;

/**
 * Brings the schema the pool points at (the first schema of its `search_path`) up to date: creates
 * `schema_migrations` if needed and applies every migration file not yet recorded there, in version
 * order, each in its own transaction together with its schema_migrations row, so a failing file
 * leaves no trace and is retried on the next call.
 *
 * Safe to run from several processes at once: every transaction first takes a transaction-scoped
 * advisory lock keyed by the schema name, and re-checks whether its file was applied meanwhile, so
 * each file runs exactly once; schemas with different names do not block each other.
 *
 * Forward-only: there are no down migrations. A file recorded as applied whose text has since changed
 * is refused (throws) instead of being silently ignored; a file with a version below one already
 * applied (added later on another branch) is still applied. Files must not contain their own
 * BEGIN/COMMIT or statements that cannot run inside a transaction (CREATE INDEX CONCURRENTLY).
 */
export async function migrate(pool: pg.Pool, options: MigrateOptions = {}): Promise<MigrateResult> {
  const files = readMigrationFiles(options.directory ?? defaultMigrationsDirectory());
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await inTransaction(client, async () => {
      await client.query(LOCK);
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version    integer     PRIMARY KEY,
           name       text        NOT NULL,
           checksum   text        NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
    });
    for (const file of files) {
      if (await applyOne(client, file)) applied.push(file.name);
    }
    client.release();
  } catch (err) {
    // The session may be mid-transaction or broken: destroy it rather than hand it back to the pool.
    client.release(true);
    throw err;
  }
  return { applied };
}

/** Applies one file unless already recorded; returns whether it ran. */
async function applyOne(client: pg.PoolClient, file: MigrationFile): Promise<boolean> {
  return inTransaction(client, async () => {
    await client.query(LOCK);
    const recorded = await client.query<{ name: string; checksum: string }>(
      'SELECT name, checksum FROM schema_migrations WHERE version = $1',
      [file.version],
    );
    const row = recorded.rows[0];
    if (row !== undefined) {
      if (row.checksum !== file.checksum) {
        throw new Error(
          `migration ${file.name} was applied (as ${row.name}) with different contents; ` +
            'applied migrations are never edited: add a new file instead',
        );
      }
      return false;
    }
    try {
      await client.query(file.sql);
    } catch (err) {
      throw new Error(`migration ${file.name} failed: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
      file.version,
      file.name,
      file.checksum,
    ]);
    return true;
  });
}

async function inTransaction<T>(client: pg.PoolClient, body: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await body();
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
