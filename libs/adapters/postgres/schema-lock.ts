import type pg from 'pg';

/**
 * Runs `work` on one client inside a transaction that first takes the advisory lock keyed by
 * `lockName` and the client's current schema, so concurrent setups of the same schema (several
 * processes creating tables and inserting seed rows) run one after another while other schemas do not
 * wait. Commits when `work` resolves. On any failure it rolls back and destroys the session (it may be
 * mid-transaction or broken) rather than handing it back to the pool, then rethrows.
 */
export async function underSchemaLock(
  pool: pg.Pool,
  lockName: string,
  work: (client: pg.PoolClient) => Promise<void>,
): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      "SELECT pg_advisory_xact_lock(hashtext($1::text), hashtext(coalesce(current_schema(), '')))",
      [lockName],
    );
    await work(client);
    await client.query('COMMIT');
    client.release();
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release(true);
    throw err;
  }
}
