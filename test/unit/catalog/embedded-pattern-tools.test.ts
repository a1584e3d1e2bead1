import { afterEach, describe, expect, it } from 'vitest';
import { openAITurn } from '../../../services/demo/scripted-model.js';
import { createEmbeddedStore, type EmbeddedStore } from '../../../services/demo/embedded-store.js';
import { agentPrincipal } from '../../helpers/principals.js';

/** A back-office assistant for warehouse worker W-1. */
const buyer = agentPrincipal(
  'back-office:W-1',
  'W-1',
  ['warehouse'],
  ['purchase_orders:write', 'reports:read'],
);

let tg: EmbeddedStore | undefined;
afterEach(async () => {
  await tg?.stop();
  tg = undefined;
});

let task = 0;
const ctx = () => ({ principal: buyer, taskId: `embedded-pattern-${++task}`, step: 1 });

async function one(turnId: string, tool: string, args: Record<string, unknown>) {
  const outcome = await tg!.client.runTurn(openAITurn(turnId, [{ tool, args }]), ctx());
  const [result] = outcome.results;
  return {
    outcome: result!.outcome,
    body: JSON.parse(outcome.messages[0]!.content as string) as Record<string, unknown>,
  };
}

describe('pattern tools across the embedded toolgate (bus, two executors, SDK)', () => {
  it('offers the pattern tools (and the scope-free weather tool) to a principal holding their scopes', async () => {
    tg = createEmbeddedStore();
    const offered = tg.catalog.registry.forPrincipal(buyer).map((t) => t.name);
    expect(offered).toEqual([
      'check_job_status',
      'create_purchase_order',
      'get_job_result',
      'get_weather',
      'preview_purchase_order',
      'submit_report_job',
    ]);
  });

  it('preview then create places one purchase order; a replayed confirm places none', async () => {
    tg = createEmbeddedStore({ executors: 2 });
    await tg.start();
    const order = { sku: 'SKU-3', quantity: 10, supplier_id: 'SUP-1' };
    const preview = await one('p1', 'preview_purchase_order', order);
    expect(preview.outcome).toBe('SUCCESS');
    const confirm = { ...order, preview_token: preview.body.preview_token };
    const created = await one('p2', 'create_purchase_order', confirm);
    expect(created.outcome).toBe('SUCCESS');
    expect(created.body).toMatchObject({ status: 'placed', total: 90.88 });
    const replay = await one('p3', 'create_purchase_order', confirm);
    expect(replay.outcome).toBe('EXECUTION_ERROR');
    expect(await tg.catalog.patterns.purchasing!.purchaseOrders.list('t1')).toHaveLength(1);
  });

  it('submit_report_job answers with a job id at once; check_job_status finds that job', async () => {
    tg = createEmbeddedStore({ executors: 2 });
    await tg.start();
    const submitted = await one('r1', 'submit_report_job', {
      report_type: 'refunds_by_reason',
      from: '2026-11-01',
      to: '2026-11-30',
    });
    expect(submitted.outcome).toBe('SUCCESS');
    expect(submitted.body).toMatchObject({ status: 'queued', job_id: expect.stringMatching(/^job_/) });
    const status = await one('r2', 'check_job_status', { job_id: submitted.body.job_id });
    expect(status.outcome).toBe('SUCCESS');
    expect(status.body).toMatchObject({ job_id: submitted.body.job_id });
  });
});
