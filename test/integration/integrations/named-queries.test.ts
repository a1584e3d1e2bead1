import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ExecutionContext } from '../../../libs/core/types.js';
import { defineNamedQuery, runNamedQuery } from '../../../libs/integrations/named-queries.js';
import type { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { runReportQueryTool } from '../../../services/catalog/tools/run-report-query.js';
import { ensureLegacyFilingSchema } from '../../../services/legacy-filing/filing-schema.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { singleToolPipeline } from './single-tool-pipeline.js';

let db: TestSchema;
let pipeline: GuardPipeline;

const FILERS: [tenant: string, filerId: string, name: string, form: string, period: string, cents: number][] =
  [
    ['t1', '100000001', "O'Brien & Sons", 'VAT3', '2025Q1', 120_000],
    ['t1', '100000001', "O'Brien & Sons", 'VAT3', '2025Q2', 130_000],
    ['t1', '100000002', '100% Organic Ltd', 'P35', '2025Q1', 50_000],
    ['t1', '100000003', 'Plain Trading', 'CT1', '2025Q1', 75_025],
    ['t2', '200000001', "Other Tenant's O'Brien", 'VAT3', '2025Q1', 999_999],
  ];

function ctx(tenant = 't1'): ExecutionContext {
  return {
    principal: { id: 'analyst-1', tenant, kind: 'user', scopes: ['reports:read'], roles: [] },
    tenant,
    taskId: 'report-task',
    step: 0,
    index: 0,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  };
}

async function report(args: Record<string, unknown>, tenant = 't1') {
  const { result } = await pipeline.run(
    { id: 'r', name: 'run_report_query', arguments: { report: args } },
    ctx(tenant),
  );
  return result;
}

async function filingCount(): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM legacy_filings');
  return rows[0]!.n;
}

beforeAll(async () => {
  db = await createTestSchema('reports');
  await ensureLegacyFilingSchema(db.pool);
  for (const [tenant, filer, name, form, period, cents] of FILERS) {
    await db.pool.query(
      `INSERT INTO legacy_filings (tenant_id, filer_id, filer_name, form_type, period, amount_cents, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, now())`,
      [tenant, filer, name, form, period, cents],
    );
  }
  pipeline = singleToolPipeline(runReportQueryTool({ pool: db.pool }), 'executor-reports');
});
afterAll(async () => {
  await db.drop();
});

describe('run_report_query over Postgres', () => {
  it('runs a named report with typed parameters, scoped to the caller’s tenant', async () => {
    const result = await report({ query: 'totals_by_form', period: '2025-Q1' });
    expect(result.outcome).toBe('SUCCESS');
    expect(result.payload).toEqual({
      query: 'totals_by_form',
      rows: [
        { form_type: 'corporate_tax', returns: 1, total_amount: 750.25 },
        { form_type: 'payroll_annual', returns: 1, total_amount: 500 },
        { form_type: 'vat_return', returns: 1, total_amount: 1200 },
      ],
      row_count: 3,
      truncated: false,
    });
    const history = await report({ query: 'filer_history', filer_id: '100000001', limit: 10 });
    expect((history.payload as { rows: { period: string }[] }).rows.map((r) => r.period)).toEqual([
      '2025-Q2',
      '2025-Q1',
    ]);
    // Another tenant's filer is invisible, whatever is asked.
    const other = await report({ query: 'filer_history', filer_id: '200000001', limit: 10 });
    expect(other.payload).toMatchObject({ row_count: 0 });
  });

  it('treats injection text in a parameter as data: nothing extra is returned, nothing is changed', async () => {
    const before = await filingCount();
    for (const text of [
      "x' OR '1'='1",
      "'; DROP TABLE legacy_filings; --",
      "' UNION SELECT filer_id, filer_name, 1 FROM legacy_filings --",
      '0%',
      '_%',
    ]) {
      const result = await report({ query: 'filers_by_name', name_contains: text, limit: 50 });
      expect([text, result.outcome]).toEqual([text, 'SUCCESS']);
      const rows = (result.payload as { rows: { filer_name: string }[] }).rows;
      // Only names that literally contain the text match: none of these, except '0%' in "100% Organic".
      expect([text, rows.map((r) => r.filer_name)]).toEqual([
        text,
        text === '0%' ? ['100% Organic Ltd'] : [],
      ]);
    }
    expect(await filingCount()).toBe(before);
    const { rows } = await db.pool.query<{ t: string | null }>(
      "SELECT to_regclass('legacy_filings')::text AS t",
    );
    expect(rows[0]!.t).toBe('legacy_filings');
  });

  it('finds names with quotes literally, and never another tenant’s', async () => {
    const result = await report({ query: 'filers_by_name', name_contains: "O'Brien", limit: 50 });
    expect((result.payload as { rows: unknown[] }).rows).toEqual([
      { filer_id: '100000001', filer_name: "O'Brien & Sons", returns: 2 },
    ]);
  });

  it('refuses SQL, unknown reports and stray parameters before the database is reached', async () => {
    for (const args of [
      { query: 'SELECT * FROM legacy_filings', limit: 1 },
      { query: 'totals_by_form', period: "2025-Q1' OR 1=1 --" },
      { query: 'filer_history', filer_id: '100000001', limit: 10, sql: 'DELETE FROM legacy_filings' },
    ]) {
      const result = await report(args);
      expect(result.outcome).toBe('SCHEMA_INVALID');
      expect(result.toolInvocations).toBe(0);
    }
  });

  it('runs read-only: even a wrongly written definition cannot change data', async () => {
    const sneaky = defineNamedQuery('sneaky', {
      description: 'a definition that tries to write',
      params: {},
      sql: 'WITH gone AS (DELETE FROM legacy_filings WHERE tenant_id = $1 RETURNING 1) SELECT count(*)::int AS n FROM gone LIMIT 1',
      values: () => [],
      row: z.object({ n: z.number() }),
      maxRows: 1,
    });
    const before = await filingCount();
    await expect(
      runNamedQuery(db.pool, sneaky, 't1', {}, { statementTimeoutMs: 1_000 }),
    ).rejects.toMatchObject({
      code: 'SERVER_ERROR',
    });
    expect(await filingCount()).toBe(before);
  });

  it('stops a statement at its timeout', async () => {
    const slow = defineNamedQuery('slow', {
      description: 'sleeps',
      params: {},
      sql: 'SELECT pg_sleep(2)::text AS s WHERE $1::text IS NOT NULL LIMIT 1',
      values: () => [],
      row: z.object({ s: z.string() }),
      maxRows: 1,
    });
    await expect(runNamedQuery(db.pool, slow, 't1', {}, { statementTimeoutMs: 50 })).rejects.toMatchObject({
      code: 'TIMEOUT',
    });
  });
});
