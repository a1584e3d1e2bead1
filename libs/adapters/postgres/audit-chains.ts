import type pg from 'pg';

/**
 * The names of the audit log's hash chains (one per tenant), in code-point order: what a per-tenant
 * verify walks (`AuditStore.verify({ chain })`). Read-only; one index-backed query.
 */
export async function listAuditChains(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ chain: string }>(
    'SELECT DISTINCT chain FROM audit_records ORDER BY chain',
  );
  return rows.map((r) => r.chain);
}
