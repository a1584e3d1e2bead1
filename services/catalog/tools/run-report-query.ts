import type pg from 'pg';
import { z } from 'zod';
import {
  defineNamedQuery,
  namedQueryChoice,
  runNamedQuery,
  type NamedQuery,
} from '../../../libs/integrations/named-queries.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { FORM_TYPES, legacyPeriod, type FormType } from '../../legacy-filing/client.js';

const FORM_CODE: Readonly<Record<FormType, string>> = {
  vat_return: 'VAT3',
  payroll_annual: 'P35',
  corporate_tax: 'CT1',
};

const period = z
  .string()
  .regex(/^\d{4}-Q[1-4]$/)
  .describe("The quarter, e.g. '2025-Q3'.");
const limit = z.number().int().min(1).max(100).describe('Most rows to return, 1-100.');

const filingRow = z.object({
  confirmation_number: z.string(),
  filer_id: z.string(),
  filer_name: z.string(),
  form_type: z.string(),
  period: z.string(),
  amount: z.coerce.number(),
  received_at: z.coerce.date().transform((d) => d.toISOString()),
});

/** SQL shared by the filing-listing queries: legacy codes back to the names the model uses. */
const FILING_COLUMNS = `confirmation_no AS confirmation_number, filer_id, filer_name,
  CASE form_type WHEN 'VAT3' THEN 'vat_return' WHEN 'P35' THEN 'payroll_annual' WHEN 'CT1' THEN 'corporate_tax' ELSE form_type END AS form_type,
  regexp_replace(period, '^(\\d{4})Q', '\\1-Q') AS period, amount_cents / 100.0 AS amount, received_at`;

/**
 * The reports the model may run, and nothing else: each a constant, reviewed SQL
 * statement over the filings, with `$1` the caller's tenant and typed parameters for the rest.
 */
export const REPORT_QUERIES = [
  defineNamedQuery('filings_for_period', {
    description: 'Returns filed for one quarter, optionally one form type, oldest first.',
    params: {
      period,
      form_type: z.enum(FORM_TYPES).optional().describe('Only this form type; leave out for all.'),
      limit,
    },
    sql: `SELECT ${FILING_COLUMNS} FROM legacy_filings
           WHERE tenant_id = $1 AND period = $2 AND ($3::text IS NULL OR form_type = $3)
           ORDER BY seq LIMIT $4`,
    values: (p) => [
      legacyPeriod(p.period),
      p.form_type === undefined ? null : FORM_CODE[p.form_type],
      p.limit,
    ],
    row: filingRow,
    maxRows: 100,
  }),
  defineNamedQuery('filer_history', {
    description: "Every return one filer has filed, newest first, by the filer's 9-digit id.",
    params: {
      filer_id: z
        .string()
        .regex(/^\d{9}$/)
        .describe("The filer's 9-digit registration number."),
      limit,
    },
    sql: `SELECT ${FILING_COLUMNS} FROM legacy_filings
           WHERE tenant_id = $1 AND filer_id = $2 ORDER BY seq DESC LIMIT $3`,
    values: (p) => [p.filer_id, p.limit],
    row: filingRow,
    maxRows: 100,
  }),
  defineNamedQuery('filers_by_name', {
    description:
      "Filers whose registered name contains some text (case-insensitive), with their number of returns. Use it to find a filer's id from a name.",
    params: {
      name_contains: z
        .string()
        .min(2)
        .max(100)
        .describe(
          'Part of the registered name, e.g. "Brien" or "Ltd"; matched literally, case-insensitively.',
        ),
      limit,
    },
    // ILIKE with an escaped pattern: % and _ typed by the user are literal characters, not wildcards.
    sql: `SELECT filer_id, min(filer_name) AS filer_name, count(*)::int AS returns
            FROM legacy_filings
           WHERE tenant_id = $1 AND filer_name ILIKE '%' || $2 || '%' ESCAPE '\\'
           GROUP BY filer_id ORDER BY filer_id LIMIT $3`,
    values: (p) => [p.name_contains.replace(/[\\%_]/g, '\\$&'), p.limit],
    row: z.object({ filer_id: z.string(), filer_name: z.string(), returns: z.number().int() }),
    maxRows: 100,
  }),
  defineNamedQuery('totals_by_form', {
    description: 'Number of returns and total amount per form type for one quarter.',
    params: { period },
    sql: `SELECT CASE form_type WHEN 'VAT3' THEN 'vat_return' WHEN 'P35' THEN 'payroll_annual' WHEN 'CT1' THEN 'corporate_tax' ELSE form_type END AS form_type,
                 count(*)::int AS returns, sum(amount_cents) / 100.0 AS total_amount
            FROM legacy_filings WHERE tenant_id = $1 AND period = $2
           GROUP BY form_type ORDER BY form_type LIMIT 10`,
    values: (p) => [legacyPeriod(p.period)],
    row: z.object({ form_type: z.string(), returns: z.number().int(), total_amount: z.coerce.number() }),
    maxRows: 10,
  }),
] as const satisfies readonly NamedQuery[];

const input = z.strictObject({
  report: namedQueryChoice(REPORT_QUERIES).describe(
    "Which report to run ('query') and its parameters. Only these reports exist; there is no free-form SQL.",
  ),
});

const output = z.object({
  query: z.string(),
  rows: z.array(z.record(z.string(), z.union([z.string(), z.number(), z.null()]))),
  row_count: z.number().int(),
  truncated: z.boolean(),
});

export type RunReportQueryInput = z.infer<typeof input>;
export type RunReportQueryOutput = z.infer<typeof output>;

/**
 * `run_report_query` (read-only): runs one of {@link REPORT_QUERIES} by name with typed parameters
 * (never model-written SQL). The statement is parameterized ($1 the tenant from the
 * verified context, the rest bound from the validated parameters), runs in a READ ONLY transaction
 * with a statement timeout, and returns at most the query's row cap. Point `pool` at a read replica
 * in production.
 */
export function runReportQueryTool(deps: {
  readonly pool: pg.Pool;
  /** Default 2 000 ms. */
  readonly statementTimeoutMs?: number;
}): ToolDefinition<RunReportQueryInput, RunReportQueryOutput> {
  const byName = new Map<string, NamedQuery>(REPORT_QUERIES.map((q) => [q.name, q]));
  return defineTool({
    name: 'run_report_query',
    version: '1.0.0',
    description:
      "Run one predefined report over the tax filings of the user's organisation: returns for a quarter, one filer's history, filers by name, or totals per form for a quarter. Use it to answer questions about what was filed; it cannot change anything. Pick the report with 'query' and give only that report's parameters.",
    input,
    output,
    scopes: ['reports:read'],
    owner: 'tax-integrations',
    stateChanging: false,
    timeoutMs: (deps.statementTimeoutMs ?? 2_000) + 1_000,
    retry: { maxAttempts: 2, baseDelayMs: 100, maxDelayMs: 400 },
    auditFields: ['report'],
    rateLimit: { capacity: 20, refillPerSecond: 1, per: ['principal'] },
    cost: { tokensIn: 90, tokensOut: 600 },
    execute: async (args, inv) => {
      const { query: name, ...params } = args.report;
      const query = byName.get(name)!;
      const result = await runNamedQuery(deps.pool, query, inv.ctx.tenant, params, {
        statementTimeoutMs: deps.statementTimeoutMs ?? 2_000,
      });
      return {
        query: name,
        rows: result.rows as Record<string, string | number | null>[],
        row_count: result.rows.length,
        truncated: result.truncated,
      };
    },
  });
}
