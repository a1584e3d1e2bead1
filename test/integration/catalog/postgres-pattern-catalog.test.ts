import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from '../../../libs/adapters/memory/index.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { ExecutionContext, NormalizedToolCall, Principal } from '../../../libs/core/types.js';
import type { ManagedCircuitBreakers } from '../../../libs/execution/breakers.js';
import { hmacPreviewKey } from '../../../libs/patterns/preview/preview-key.js';
import type { IdempotencyStore } from '../../../libs/ports/idempotency-store.js';
import {
  createPostgresStoreCatalog,
  type StoreCatalog,
  type StoreCatalogConfig,
} from '../../../services/catalog/index.js';
import { ensureLegacyFilingSchema } from '../../../services/legacy-filing/filing-schema.js';
import { startLegacyFilingServer, type LegacyFilingServer } from '../../../services/legacy-filing/server.js';
import { DATABASE_URL } from '../../helpers/env.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import {
  CONFIGURED_TOOLS,
  CORE_TOOLS,
  PURCHASE_ORDER_TOOLS,
  REPORT_JOB_TOOLS,
  expectProviderExportsValid,
} from '../../unit/catalog/registered-tools.js';
import { memoryPipeline } from '../../helpers/memory-pipeline.js';

/** A warehouse assistant with every scope the pattern tools ask for. */
const buyer: Principal = {
  id: 'agent:back-office',
  tenant: 't1',
  kind: 'agent',
  onBehalfOf: 'W-1',
  roles: ['warehouse'],
  scopes: ['purchase_orders:write', 'reports:read', 'filings:write', 'documents:read'],
};

/** One executor: its catalog behind its own guard pipeline, sharing idempotency with the others. */
interface Executor {
  readonly catalog: StoreCatalog;
  readonly breakers: ManagedCircuitBreakers;
  run(
    call: NormalizedToolCall,
    ctx: ExecutionContext,
  ): Promise<{ outcome: string; payload?: unknown; error?: { code: string; message: string } }>;
}

let db: TestSchema;
let servicePool: pg.Pool;
let server: LegacyFilingServer;
let dir: string;
let config: StoreCatalogConfig;
const idempotency: IdempotencyStore = new MemoryIdempotencyStore(systemClock);
const executors: Executor[] = [];

async function executor(cfg: StoreCatalogConfig): Promise<Executor> {
  const catalog = await createPostgresStoreCatalog(
    { postgres: () => Promise.resolve(db.pool), clock: systemClock },
    cfg,
  );
  const { pipeline, breakers } = memoryPipeline({
    clock: systemClock,
    tools: catalog.registry,
    policy: catalog.policy,
    downstreamLimits: catalog.downstreamLimits,
    owner: uniqueName('executor'),
    idempotency,
    settings: { resultTtlMs: 600_000, leaseMarginMs: 2_000 },
  });
  const made: Executor = {
    catalog,
    breakers,
    run: async (call, ctx) => (await pipeline.run(call, ctx)).result,
  };
  executors.push(made);
  return made;
}

let seq = 0;
function call(name: string, args: Record<string, unknown>): NormalizedToolCall {
  seq += 1;
  return { id: `call_${seq}`, name, arguments: args };
}
function ctx(): ExecutionContext {
  return {
    principal: buyer,
    tenant: buyer.tenant,
    taskId: uniqueName('task'),
    step: 0,
    index: 0,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  };
}

async function count(table: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0]!.n;
}

beforeAll(async () => {
  db = await createTestSchema('catpat');
  await ensureLegacyFilingSchema(db.pool);
  servicePool = new pg.Pool({
    connectionString: DATABASE_URL,
    max: 4,
    options: `-c search_path="${db.schema}"`,
  });
  server = await startLegacyFilingServer({ pool: servicePool, commitWindowMs: 2_000 });
  dir = await mkdtemp(join(tmpdir(), 'catalog-docs-'));
  await writeFile(join(dir, 'purchasing.md'), '# Purchasing\nOrders above $1,000 need a manager.\n');
  config = {
    previewKey: hmacPreviewKey(randomBytes(32).toString('base64')),
    legacyFilingUrl: server.url,
    documentsRoot: dir,
    reports: { databaseUrl: DATABASE_URL, schema: db.schema },
  };
});

afterAll(async () => {
  for (const e of executors) {
    e.breakers.shutdown();
    await e.catalog.close();
  }
  await server.close();
  await servicePool.end();
  await rm(dir, { recursive: true, force: true });
  await db.drop();
});

describe('store catalog in server mode (Postgres backends)', () => {
  it('fully configured: every tool registered, each exportable to OpenAI strict and Anthropic', async () => {
    const { catalog } = await executor(config);
    expect(expectProviderExportsValid(catalog.registry)).toEqual(
      [...CORE_TOOLS, ...REPORT_JOB_TOOLS, ...PURCHASE_ORDER_TOOLS, ...CONFIGURED_TOOLS].sort(),
    );
  });

  it('unconfigured: only the core tools and report jobs (no preview secret, filing URL, documents or reports DB)', async () => {
    const { catalog } = await executor({});
    expect(expectProviderExportsValid(catalog.registry)).toEqual([...CORE_TOOLS, ...REPORT_JOB_TOOLS].sort());
    expect(catalog.patterns.purchasing).toBeUndefined();
  });

  it('a preview on one executor is confirmed on another with the same secret; once', async () => {
    const a = await executor(config);
    const b = await executor(config);
    const order = { sku: 'SKU-3', quantity: 10, supplier_id: 'SUP-1' };
    const preview = await a.run(call('preview_purchase_order', order), ctx());
    expect(preview.outcome).toBe('SUCCESS');
    const token = (preview.payload as { preview_token: string }).preview_token;
    const before = await count('store_purchase_orders');

    const created = await b.run(call('create_purchase_order', { ...order, preview_token: token }), ctx());
    expect(created.outcome).toBe('SUCCESS');
    expect(created.payload).toMatchObject({ status: 'placed', po_id: expect.stringMatching(/^PO-\d{6}$/) });
    expect(await count('store_purchase_orders')).toBe(before + 1);

    const replay = await a.run(call('create_purchase_order', { ...order, preview_token: token }), ctx());
    expect(replay.outcome).toBe('EXECUTION_ERROR');
    expect(replay.error?.message).toContain('already used');
    expect(await count('store_purchase_orders')).toBe(before + 1);
  });

  it('a preview signed with another secret is refused and places nothing', async () => {
    const a = await executor(config);
    const stranger = await executor({
      ...config,
      previewKey: hmacPreviewKey(randomBytes(32).toString('base64')),
    });
    const order = { sku: 'SKU-3', quantity: 2, supplier_id: 'SUP-2' };
    const preview = await stranger.run(call('preview_purchase_order', order), ctx());
    const token = (preview.payload as { preview_token: string }).preview_token;
    const before = await count('store_purchase_orders');
    const refused = await a.run(call('create_purchase_order', { ...order, preview_token: token }), ctx());
    expect(refused.outcome).not.toBe('SUCCESS');
    expect(await count('store_purchase_orders')).toBe(before);
  });

  it('a report job submitted on one executor is visible on another (shared job store)', async () => {
    const a = await executor(config);
    const b = await executor(config);
    const range = { report_type: 'refunds_by_order', from: '2026-01-01', to: '2026-03-31' };
    const submitted = await a.run(call('submit_report_job', range), ctx());
    expect(submitted.outcome).toBe('SUCCESS');
    const { job_id } = submitted.payload as { job_id: string };
    const status = await b.run(call('check_job_status', { job_id }), ctx());
    expect(status.outcome).toBe('SUCCESS');
    expect(status.payload).toMatchObject({ job_id, status: expect.stringMatching(/^(queued|running)$/) });
    expect(await count('jobs')).toBeGreaterThanOrEqual(1);
  });

  it('submit_filing files once with the legacy service; run_report_query finds it; read_document reads', async () => {
    const a = await executor(config);
    const filing = {
      filer_id: '123456789',
      filer_name: "O'Brien Hardware Ltd",
      form_type: 'vat_return',
      period: '2025-Q3',
      amount: 1250.4,
    };
    const filed = await a.run(call('submit_filing', filing), ctx());
    expect(filed.outcome).toBe('SUCCESS');
    expect(filed.payload).toMatchObject({ status: 'received', already_filed: false, amount: 1250.4 });
    expect(await count('legacy_filings')).toBe(1);
    expect(server.stats().committed).toBe(1);

    const report = await a.run(
      call('run_report_query', { report: { query: 'filer_history', filer_id: '123456789', limit: 10 } }),
      ctx(),
    );
    expect(report.outcome).toBe('SUCCESS');
    expect(report.payload).toMatchObject({
      query: 'filer_history',
      row_count: 1,
      rows: [{ filer_id: '123456789', form_type: 'vat_return', period: '2025-Q3', amount: 1250.4 }],
    });

    const doc = await a.run(call('read_document', { path: 'purchasing.md' }), ctx());
    expect(doc.outcome).toBe('SUCCESS');
    expect((doc.payload as { content: string }).content).toContain('need a manager');
  });

  it('close ends the reports pool the catalog opened, and leaves the shared pool to its owner', async () => {
    const catalog = await createPostgresStoreCatalog(
      { postgres: () => Promise.resolve(db.pool), clock: systemClock },
      config,
    );
    const reportsPool = catalog.patterns.reportsPool!;
    await catalog.close();
    expect(reportsPool.ended).toBe(true);
    expect(await count('jobs')).toBeGreaterThanOrEqual(0);
  });
});
