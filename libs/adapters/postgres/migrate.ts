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

/**
 * The migration files not yet applied to the schema the pool points at, in version order, read
 * without DDL or locks: a role that may only read `schema_migrations` (the audit sink's least role)
 * can tell whether its schema is current. Every file is pending when `schema_migrations` does not
 * exist. Throws, like {@link migrate}, when an applied file's text has since changed, and passes on
 * any other database error (e.g. permission denied on `schema_migrations`).
 */
export async function pendingMigrations(pool: pg.Pool, options: MigrateOptions = {}): Promise<string[]> {
  const files = readMigrationFiles(options.directory ?? defaultMigrationsDirectory());
  let recorded: Map<number, { name: string; checksum: string }>;
  try {
    const { rows } = await pool.query<{ version: number; name: string; checksum: string }>(
      'SELECT version, name, checksum FROM schema_migrations',
    );
    recorded = new Map(rows.map((r) => [r.version, r]));
  } catch (err) {
    if ((err as { code?: unknown }).code !== UNDEFINED_TABLE) throw err;
    recorded = new Map();
  }
  const pending: string[] = [];
  for (const file of files) {
    const row = recorded.get(file.version);
    if (row === undefined) pending.push(file.name);
    else if (row.checksum !== file.checksum) throw editedMigration(file, row.name);
  }
  return pending;
}

/** SQLSTATE of a missing relation. */
const UNDEFINED_TABLE = '42P01';

function editedMigration(file: MigrationFile, recordedAs: string): Error {
  return new Error(
    `migration ${file.name} was applied (as ${recordedAs}) with different contents; ` +
      'applied migrations are never edited: add a new file instead',
  );
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
      if (row.checksum !== file.checksum) throw editedMigration(file, row.name);
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
