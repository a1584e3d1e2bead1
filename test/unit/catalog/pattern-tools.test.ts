import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionContext, NormalizedToolCall, Principal } from '../../../libs/core/types.js';
import { ConfinedFs } from '../../../libs/integrations/confined-fs.js';
import { memoryPatternBackends } from '../../../services/catalog/index.js';
import { agentPrincipal } from '../../helpers/principals.js';
import { ctxFor, storeHarness, toolCall, type StoreHarness } from './store-harness.js';

/** An assistant ordering stock and running reports for warehouse worker W-1. */
const buyer = agentPrincipal(
  'agent:purchasing',
  'W-1',
  ['warehouse'],
  ['purchase_orders:write', 'reports:read', 'documents:read'],
);

/** A support assistant holding the scope but not a purchasing role. */
const supportBuyer: Principal = { ...buyer, id: 'agent:support-desk', roles: ['support'] };

const ORDER = { sku: 'SKU-3', quantity: 10, supplier_id: 'SUP-1' };

let dir: string;
let h: StoreHarness;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'catalog-smoke-'));
  await writeFile(join(dir, 'returns.md'), '# Returns\nWithin 30 days of delivery.\n');
});
afterAll(() => rm(dir, { recursive: true, force: true }));
afterEach(() => h.close());

async function harness(): Promise<StoreHarness> {
  const documents = await ConfinedFs.create(dir, { maxBytes: 4_096, extensions: ['.md'] });
  return storeHarness({ patterns: (clock) => memoryPatternBackends(clock, { documents }) });
}

/**
 * Runs one call without moving the manual clock: token signing and checking are real asynchronous
 * crypto, and a clock advanced while they run would time the call out on fake time.
 */
function run(call: NormalizedToolCall, ctx: ExecutionContext) {
  return h.pipeline.run(call, ctx);
}

async function placed(): Promise<number> {
  return (await h.catalog.patterns.purchasing!.purchaseOrders.list('t1')).length;
}

describe('pattern tools through the registry and the guard pipeline (embedded mode)', () => {
  it('preview_purchase_order then create_purchase_order places exactly one order; a replay places none', async () => {
    h = await harness();
    const preview = await run(toolCall('preview_purchase_order', ORDER), ctxFor(buyer));
    expect(preview.result.outcome).toBe('SUCCESS');
    const priced = preview.result.payload as {
      preview_token: string;
      total: number;
      requires_approval: boolean;
    };
    expect(priced).toMatchObject({ requires_approval: false, total: 90.88 });
    expect(await placed()).toBe(0);

    const confirm = { ...ORDER, preview_token: priced.preview_token };
    const created = await run(toolCall('create_purchase_order', confirm), ctxFor(buyer));
    expect(created.result.outcome).toBe('SUCCESS');
    expect(created.result.payload).toMatchObject({ status: 'placed', total: 90.88, approved_by: null });
    expect(await placed()).toBe(1);

    // Another call (another task) with the same token: the token is used up, nothing is placed.
    const replay = await run(toolCall('create_purchase_order', confirm), ctxFor(buyer));
    expect(replay.result.outcome).toBe('EXECUTION_ERROR');
    expect(replay.result.error).toMatchObject({ code: 'CALLER_ERROR', retryable: false });
    expect(replay.result.error?.message).toContain('already used');
    expect(await placed()).toBe(1);
  });

  it('an order above the approval threshold is placed only after a person approves its preview_id', async () => {
    h = await harness();
    const big = { sku: 'SKU-7', quantity: 50, supplier_id: 'SUP-1' };
    const preview = await run(toolCall('preview_purchase_order', big), ctxFor(buyer));
    const priced = preview.result.payload as {
      preview_token: string;
      preview_id: string;
      requires_approval: boolean;
    };
    expect(priced.requires_approval).toBe(true);
    const confirm = { ...big, preview_token: priced.preview_token };
    const early = await run(toolCall('create_purchase_order', confirm), ctxFor(buyer));
    expect(early.result.outcome).toBe('POLICY_VIOLATION');
    expect(early.result.error?.message).toContain(priced.preview_id);
    expect(await placed()).toBe(0);

    expect((await h.catalog.patterns.purchasing!.approvals.approve(priced.preview_id, 'M-1', 'ok')).ok).toBe(
      true,
    );
    const approved = await run(toolCall('create_purchase_order', confirm), ctxFor(buyer));
    expect(approved.result.outcome).toBe('SUCCESS');
    expect(approved.result.payload).toMatchObject({ approved_by: 'M-1' });
    expect(await placed()).toBe(1);
  });

  it('a principal without a purchasing role is refused before the purchasing service is read', async () => {
    h = await harness();
    const refused = await run(toolCall('preview_purchase_order', ORDER), ctxFor(supportBuyer));
    expect(refused.result.outcome).toBe('UNAUTHORIZED');
    expect(await placed()).toBe(0);
  });

  it('submit_report_job returns a job id; check_job_status follows it; get_job_result returns the report', async () => {
    h = await harness();
    await h.downstreams.payments.refund({
      tenant: 't1',
      order_id: 'O-5512',
      amount_cents: 1_250,
      reason: 'damaged',
      idempotency_key: 'refund-before-report',
    });
    const range = { report_type: 'refunds_by_reason', from: '2026-11-01', to: '2026-11-30' };
    const submitted = await run(toolCall('submit_report_job', range), ctxFor(buyer));
    expect(submitted.result.outcome).toBe('SUCCESS');
    const { job_id } = submitted.result.payload as { job_id: string };
    expect(job_id).toMatch(/^job_/);

    const status = await run(toolCall('check_job_status', { job_id }), ctxFor(buyer));
    expect(status.result.outcome).toBe('SUCCESS');
    expect(status.result.payload).toMatchObject({
      job_id,
      status: expect.stringMatching(/^(queued|running)$/),
    });

    await h.clock.advance(120_000);
    const done = await run(toolCall('get_job_result', { job_id }), ctxFor(buyer));
    expect(done.result.outcome).toBe('SUCCESS');
    expect(done.result.payload).toMatchObject({
      job_id,
      report_type: 'refunds_by_reason',
      rows: [{ key: 'damaged', count: 1, amount: 12.5 }],
      total_count: 1,
    });
  });

  it('read_document reads from the configured folder and nothing outside it', async () => {
    h = await harness();
    const read = await run(toolCall('read_document', { path: 'returns.md' }), ctxFor(buyer));
    expect(read.result.outcome).toBe('SUCCESS');
    expect(read.result.payload).toMatchObject({ path: 'returns.md', truncated: false });
    expect((read.result.payload as { content: string }).content).toContain('Within 30 days');

    const escape = await run(toolCall('read_document', { path: '../etc/passwd' }), ctxFor(buyer));
    expect(escape.result.outcome).toBe('EXECUTION_ERROR');
    expect(escape.result.error).toMatchObject({ code: 'CALLER_ERROR' });
  });
});
