import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryApprovalStore } from '../../../libs/adapters/memory/approval-store.js';
import { MemoryIdempotencyStore } from '../../../libs/adapters/memory/memory-idempotency-store.js';
import { MemoryEventBus } from '../../../libs/bus/memory/memory-event-bus.js';
import { DEFAULT_BACKOFF } from '../../../libs/core/backoff.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import { topicNames } from '../../../libs/events/topics.js';
import type { ApprovalDraft } from '../../../libs/ports/approval-store.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { ApprovalsQueue } from '../../../services/ops-console/approvals.js';

/** A purchase-order tool as the catalog defines one: decisive sku, quantity and supplier; `secret` never shown. */
const purchaseOrderTool = defineTool({
  name: 'create_purchase_order',
  version: '1.0.0',
  description: 'Place a previewed purchase order.',
  input: z.object({
    sku: z.string(),
    quantity: z.number().int(),
    supplier_id: z.string(),
    secret: z.string(),
  }),
  output: z.object({ order_id: z.string() }),
  auditFields: ['sku', 'quantity', 'supplier_id'],
  decisiveFields: ['sku', 'quantity', 'supplier_id'],
  retrySafety: { kind: 'forwards-key' },
  scopes: ['purchasing:write'],
  owner: 'purchasing',
  execute: () => Promise.resolve({ order_id: 'PO-1' }),
});

/** The console's queue over the memory approval store: tenant scope, four eyes, arguments shown. */
async function queue(options: { readonly knowsTool?: boolean } = {}) {
  const clock = new ManualClock(1_800_000_000_000);
  const tools = new ToolRegistry();
  if (options.knowsTool !== false) tools.register(purchaseOrderTool);
  const store = new MemoryApprovalStore(clock);
  const bus = new MemoryEventBus();
  const topics = topicNames('unit');
  await bus.ensureTopics([{ topic: topics.audit, partitions: 1 }]);
  const q = new ApprovalsQueue({
    approvals: store,
    tools,
    clock,
    delivery: {
      publisher: bus,
      codec: new LocalEventCodec(),
      topics,
      idempotency: new MemoryIdempotencyStore(clock),
      clock,
      logger: silentLogger,
      backoff: DEFAULT_BACKOFF,
      replyTopics: {},
      resultTtlMs: 60_000,
    },
  });
  const draft = (id: string, tenant: string): ApprovalDraft => ({
    id,
    tenant,
    tool: 'create_purchase_order',
    toolVersion: '1.0.0',
    arguments: { sku: 'SKU-21', quantity: 30, supplier_id: 'SUP-2', secret: 'x' },
    argumentsHash: 'a'.repeat(64),
    requester: 'warehouse-bot:2',
    onBehalfOf: 'W-2',
    rule: { rule: 'purchase-order-total', reason: 'above $1,000', approvers: 1 },
    expiresAtMs: clock.now() + 600_000,
  });
  return { q, store, draft };
}

describe('the approvals queue', () => {
  it('a request outside the scope is answered exactly like an unknown one, and is never listed or decided', async () => {
    const { q, store, draft } = await queue();
    await store.create(draft('r-1', 't1'));
    const other = { all: false, tenants: ['t2'] } as const;
    expect(await q.find(other, 'r-1')).toBeUndefined();
    const unknown = { ok: false, reason: 'not-found', detail: 'there is no approval request r-1' };
    expect(await q.approve(other, 'r-1', 'mia', 'ok')).toEqual(unknown);
    await store.create(draft('r-9', 't2'));
    expect(await q.approve({ all: false, tenants: ['t9'] }, 'r-1', 'mia', 'ok')).toEqual(unknown);
    expect(await q.reject(other, 'r-1', 'mia', 'no')).toMatchObject({ ok: false, reason: 'not-found' });
    expect(await q.history(other, 'r-1')).toEqual([]);
    expect((await q.list(other)).items.map((v) => v.request.id)).toEqual(['r-9']);
    expect((await q.list(other)).counts.pending).toBe(1);
    expect((await store.get('r-1'))?.state).toBe('pending');
    expect((await q.list({ all: false, tenants: ['t1'] })).items.map((v) => v.request.id)).toEqual(['r-1']);
  });

  it('four eyes with the session spelling: the agent and the user it acts for are refused, someone else approves', async () => {
    const { q, store, draft } = await queue();
    await store.create(draft('r-1', 't1'));
    const all = { all: true } as const;
    expect(await q.approve(all, 'r-1', 'W-2', 'mine')).toMatchObject({
      ok: false,
      reason: 'not-allowed',
      detail: 'the action is done on your behalf; someone else must approve it',
    });
    expect(await q.approve(all, 'r-1', 'operator:warehouse-bot:2', 'mine')).toMatchObject({
      ok: false,
      detail: 'you asked for this action yourself; someone else must approve it',
    });
    expect(await q.approve(all, 'r-1', 'mia', 'ok')).toMatchObject({ ok: true, audited: true });
    expect(await q.approve(all, 'r-1', 'noah', 'ok')).toMatchObject({
      ok: false,
      detail: 'request r-1 is already decided',
    });
    expect((await store.get('r-1'))?.approvals.map((a) => a.by)).toEqual(['mia']);
  });

  it('shows the call as confirmations do: decisive fields first and whole, the rest withheld by name', async () => {
    const { q, store, draft } = await queue();
    await store.create(draft('r-1', 't1'));
    const view = await q.find({ all: true }, 'r-1');
    expect(view?.shown).toMatchObject({ ok: true });
    const text = view?.shown.ok === true ? view.shown.call.text : '';
    expect(text.split('\n')).toEqual([
      'Call create_purchase_order (version 1.0.0) with:',
      'sku: SKU-21',
      'quantity: 30',
      'supplier_id: SUP-2',
      'Withheld from view: secret',
    ]);
    expect(text).not.toContain('x\n');
  });

  it('a call of a tool the console does not know cannot be approved: nobody can see what would run', async () => {
    const { q, store, draft } = await queue({ knowsTool: false });
    await store.create(draft('r-1', 't1'));
    expect(await q.approve({ all: true }, 'r-1', 'mia', 'ok')).toMatchObject({
      ok: false,
      reason: 'not-allowed',
      detail:
        'request r-1 cannot be approved: the console does not know tool create_purchase_order 1.0.0, so it cannot show what would run',
    });
    expect((await store.get('r-1'))?.state).toBe('pending');
    expect(await q.reject({ all: true }, 'r-1', 'mia', 'unknown tool')).toMatchObject({ ok: true });
  });

  it('shows only allow-listed arguments: a tool the catalog does not know has every value redacted', async () => {
    const { q, store, draft } = await queue({ knowsTool: false });
    await store.create(draft('r-1', 't1'));
    const view = await q.find({ all: true }, 'r-1');
    expect(view?.arguments).toEqual({
      sku: '[redacted]',
      quantity: '[redacted]',
      supplier_id: '[redacted]',
      secret: '[redacted]',
    });
  });
});
