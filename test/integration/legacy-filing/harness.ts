import pg from 'pg';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { ExecutionContext, NormalizedToolCall } from '../../../libs/core/types.js';
import type { StatusCheckTiming } from '../../../libs/integrations/status-check-adapter.js';
import { PostgresSubmissionLedger } from '../../../libs/integrations/submission-ledger.js';
import type { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { submitFilingTool } from '../../../services/catalog/tools/submit-filing.js';
import { LegacyFilingClient } from '../../../services/legacy-filing/client.js';
import { LegacyFaults, type LegacyFaultRates } from '../../../services/legacy-filing/faults.js';
import { ensureLegacyFilingSchema } from '../../../services/legacy-filing/filing-schema.js';
import { startLegacyFilingServer, type LegacyFilingServer } from '../../../services/legacy-filing/server.js';
import { DATABASE_URL } from '../../helpers/env.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { memoryPipeline } from '../../helpers/memory-pipeline.js';

/** Short timings so a thousand calls with lost answers finish in seconds. */
export const FAST_TIMING: StatusCheckTiming = {
  lookupTimeoutMs: 2_000,
  submitTimeoutMs: 1_000,
  settleMarginMs: 250,
};

/** The fake legacy service on real HTTP over its own Postgres schema, and submit_filing in a pipeline. */
export interface LegacyStack {
  readonly db: TestSchema;
  readonly server: LegacyFilingServer;
  readonly tool: ToolDefinition;
  readonly pipeline: GuardPipeline;
  /** Filings stored under each natural key `filer|form|period` for tenant t1. */
  rowsByKey(): Promise<Map<string, number>>;
  close(): Promise<void>;
}

export async function legacyStack(opts: {
  readonly faults: LegacyFaultRates;
  readonly seed: number;
  /** The service's own commit window, counted from when it gets to a request. Default 1 s. */
  readonly serviceWindowMs?: number;
  readonly slowMs?: number;
  readonly timing?: StatusCheckTiming;
  readonly poolMax?: number;
  readonly fetch?: typeof fetch;
}): Promise<LegacyStack> {
  const db = await createTestSchema('legacy');
  await ensureLegacyFilingSchema(db.pool);
  await migrate(db.pool);
  const timing = opts.timing ?? FAST_TIMING;
  // The service has its own connections, as a separate system would, so its commit window is not
  // eaten by waiting behind the ledger's and the test's queries.
  const servicePool = new pg.Pool({
    connectionString: DATABASE_URL,
    max: 20,
    options: `-c search_path="${db.schema}"`,
  });
  const server = await startLegacyFilingServer({
    pool: servicePool,
    commitWindowMs: opts.serviceWindowMs ?? 1_000,
    faults: new LegacyFaults(opts.faults, opts.seed),
    slowMs: opts.slowMs ?? 0,
    clock: systemClock,
  });
  const client = new LegacyFilingClient({
    baseUrl: server.url,
    clock: systemClock,
    timeoutMs: 5_000,
    ...(opts.fetch === undefined ? {} : { fetch: opts.fetch }),
  });
  const tool = submitFilingTool({
    client,
    ledger: new PostgresSubmissionLedger(db.pool),
    clock: systemClock,
    timing,
  }) as unknown as ToolDefinition;
  const registry = new ToolRegistry();
  registry.register(tool);
  const { pipeline } = memoryPipeline({
    clock: systemClock,
    tools: registry,
    policy: createPolicyEngine({ version: 'test' }, []),
    downstreamLimits: {},
    owner: 'executor-status-check',
    breaker: {
      // A lost answer counts against the downstream; the lab loses 30% on purpose, so the breaker
      // must not open on it (a real deployment would tune this to the service's normal error rate).
      errorThresholdPercentage: 95,
      volumeThreshold: 10_000,
      resetTimeoutMs: 10_000,
    },
    settings: { resultTtlMs: 600_000, leaseMarginMs: 2_000 },
  });
  return {
    db,
    server,
    tool,
    pipeline,
    async rowsByKey() {
      const { rows } = await db.pool.query<{ key: string; n: number }>(
        `SELECT filer_id || '|' || form_type || '|' || period AS key, count(*)::int AS n
           FROM legacy_filings WHERE tenant_id = 't1' GROUP BY 1`,
      );
      return new Map(rows.map((r) => [r.key, r.n]));
    },
    async close() {
      await server.close();
      await servicePool.end();
      await db.drop();
    },
  };
}

/** The legacy natural key of a submit_filing argument set, as `rowsByKey` spells it. */
export function legacyKey(args: FilingArgs): string {
  const code = { vat_return: 'VAT3', payroll_annual: 'P35', corporate_tax: 'CT1' }[args.form_type];
  return `${args.filer_id}|${code}|${args.period.replace('-', '')}`;
}

export interface FilingArgs extends Record<string, unknown> {
  readonly filer_id: string;
  readonly filer_name: string;
  readonly form_type: 'vat_return' | 'payroll_annual' | 'corporate_tax';
  readonly period: string;
  readonly amount: number;
}

export function filingArgs(i: number, amount = 100 + (i % 97) + 0.25): FilingArgs {
  const forms = ['vat_return', 'payroll_annual', 'corporate_tax'] as const;
  return {
    filer_id: String(100_000_000 + i),
    filer_name: `Filer ${i} Ltd`,
    form_type: forms[i % 3]!,
    period: `2024-Q${(i % 4) + 1}`,
    amount,
  };
}

export function context(taskId: string, index = 0): ExecutionContext {
  return {
    principal: {
      id: 'agent-1',
      tenant: 't1',
      kind: 'agent',
      scopes: ['filings:write'],
      roles: [],
      onBehalfOf: 'u-1',
    },
    tenant: 't1',
    taskId,
    step: 0,
    index,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  };
}

export function call(args: FilingArgs, id: string): NormalizedToolCall {
  return { id, name: 'submit_filing', arguments: args };
}

/** Runs `groups` with at most `limit` running at once; the items of one group run in order. */
export async function runGrouped<T, R>(
  groups: readonly (readonly T[])[],
  limit: number,
  run: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < groups.length) {
      const group = groups[next++]!;
      for (const item of group) results.push(await run(item));
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}
