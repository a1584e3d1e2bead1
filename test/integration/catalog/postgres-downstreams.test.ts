import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { Principal } from '../../../libs/core/types.js';
import { buildStoreCatalog, createStoreCatalog } from '../../../services/catalog/index.js';
import { createPostgresDownstreams } from '../../../services/downstreams/postgres/postgres-downstreams.js';
import { ensureStoreSchema } from '../../../services/downstreams/postgres/store-schema.js';
import { storeSeed } from '../../../services/downstreams/seed-data.js';
import type { StoreDownstreams } from '../../../services/downstreams/store-downstreams.js';
import type { AdjustRequest } from '../../../services/downstreams/inventory/inventory-api.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { memoryPipeline } from '../../helpers/memory-pipeline.js';

let db: TestSchema;
let store: StoreDownstreams;

beforeAll(async () => {
  db = await createTestSchema('catalog');
  store = await createPostgresDownstreams(db.pool, { clock: systemClock });
});

afterAll(async () => {
  await store.close();
  await db.drop();
});

const refundRequest = (key: string, amount_cents: number, order_id = 'O-5512') => ({
  tenant: 't1',
  order_id,
  amount_cents,
  reason: 'damaged' as const,
  idempotency_key: key,
});

async function ledgerRows(orderId: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM store_refunds WHERE tenant = $1 AND order_id = $2',
    ['t1', orderId],
  );
  return rows[0]!.n;
}

describe('Postgres store schema', () => {
  it('is created and seeded once, even when prepared concurrently, and keeps what services wrote', async () => {
    await Promise.all([ensureStoreSchema(db.pool, storeSeed()), ensureStoreSchema(db.pool, storeSeed())]);
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM store_orders');
    expect(rows[0]!.n).toBe(storeSeed().orders.length);
    expect(await store.orders.getOrder('t1', 'O-5512')).toMatchObject({
      customer_id: 'C-1',
      total_cents: 4999,
      placed_at: '2026-11-02T14:31:00.000Z',
      lines: [{ sku: 'SKU-7', quantity: 1, unit_price_cents: 4999 }],
    });
    expect(await store.orders.getOrder('t2', 'O-5512')).toBeUndefined();
  });
});

describe('Postgres payments', () => {
  it('ten concurrent requests with one key apply one refund and all get its receipt', async () => {
    const receipts = await Promise.all(
      Array.from({ length: 10 }, () => store.payments.refund(refundRequest('same-key', 1500, 'O-7788'))),
    );
    expect(new Set(receipts.map((r) => r.refund_id)).size).toBe(1);
    expect(await ledgerRows('O-7788')).toBe(1);
    expect(await store.payments.findRefund('t1', 'same-key')).toEqual(receipts[0]);
  });

  it('concurrent refunds with distinct keys never exceed what was captured', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => store.payments.refund(refundRequest(`split-${i}`, 2000, 'O-6120'))),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    // $25.98 captured: exactly one $20 refund fits.
    expect(ok).toHaveLength(1);
    for (const r of refused) expect(r.reason).toMatchObject({ status: 422 });
    const { rows } = await db.pool.query<{ sum: number }>(
      "SELECT sum(amount_cents)::int AS sum FROM store_refunds WHERE order_id = 'O-6120'",
    );
    expect(rows[0]!.sum).toBe(2000);
  });

  it('a reused key with other arguments is refused', async () => {
    await store.payments.refund(refundRequest('reuse', 100, 'O-9001'));
    await expect(store.payments.refund(refundRequest('reuse', 200, 'O-9001'))).rejects.toMatchObject({
      status: 409,
      reason: 'idempotency_key_reused',
    });
  });
});

describe('Postgres inventory', () => {
  it('is racy without serialization: two adjustments that both read before writing lose one update', async () => {
    const schema = await createTestSchema('catalog_race');
    let arrived = 0;
    let release!: () => void;
    const bothRead = new Promise<void>((resolve) => (release = resolve));
    const barrier = async (_: AdjustRequest) => {
      arrived += 1;
      if (arrived === 2) release();
      await bothRead;
    };
    const racy = await createPostgresDownstreams(schema.pool, {
      clock: systemClock,
      betweenReadAndWrite: barrier,
    });
    try {
      await Promise.all([
        racy.inventory.adjust({ tenant: 't1', sku: 'SKU-7', delta: 5, reason: 'received', reference: 'a' }),
        racy.inventory.adjust({ tenant: 't1', sku: 'SKU-7', delta: 3, reason: 'received', reference: 'b' }),
      ]);
      expect((await racy.inventory.getStock('t1', 'SKU-7'))!.on_hand).not.toBe(48);
      expect(await racy.inventory.findMovement('t1', 'a')).toBeDefined();
      expect(await racy.inventory.findMovement('t1', 'b')).toBeDefined();
    } finally {
      await racy.close();
      await schema.drop();
    }
  });

  it('serialized, both land; below zero is refused', async () => {
    await store.inventory.adjust({
      tenant: 't1',
      sku: 'SKU-12',
      delta: 5,
      reason: 'received',
      reference: 'x1',
    });
    await store.inventory.adjust({
      tenant: 't1',
      sku: 'SKU-12',
      delta: 3,
      reason: 'received',
      reference: 'x2',
    });
    expect((await store.inventory.getStock('t1', 'SKU-12'))!.on_hand).toBe(33);
    await expect(
      store.inventory.adjust({ tenant: 't1', sku: 'SKU-12', delta: -34, reason: 'damaged', reference: 'x3' }),
    ).rejects.toMatchObject({ status: 409, reason: 'insufficient_stock' });
    expect(await store.inventory.findMovement('t1', 'x3')).toBeUndefined();
  });
});

describe('Postgres CRM and weather', () => {
  it('holds PII the tools must strip, and applies its own access rules', async () => {
    const contact = await store.crm.getContact('t1', 'C-1', { user_id: 'C-1', roles: ['customer'] });
    expect(contact).toMatchObject({ name: 'Ana Silva', ssn_last4: '4821' });
    await expect(
      store.crm.getContact('t1', 'C-1', { user_id: 'C-2', roles: ['customer'] }),
    ).rejects.toMatchObject({
      status: 403,
    });
    const hits = await store.crm.searchCustomers(
      't1',
      { text: '555 0177', limit: 5 },
      { user_id: 'S-1', roles: ['support'] },
    );
    expect(hits).toEqual([{ customer_id: 'C-2', name: 'Ben Okafor', email: 'ben.okafor@example.com' }]);
    expect(await store.weather.current('SEATTLE')).toMatchObject({
      city: 'Seattle',
      temperature_c: 8,
      conditions: 'rain',
    });
  });
});

describe('store catalog on Postgres behind the guard pipeline', () => {
  const support: Principal = {
    id: 'agent:support-desk',
    tenant: 't1',
    kind: 'agent',
    onBehalfOf: 'S-1',
    roles: ['support'],
    scopes: ['orders:read', 'refunds:write'],
  };

  it('a lost answer is retried with the same key and the ledger (written by payments) has one row', async () => {
    const schema = await createTestSchema('catalog_pipe');
    const catalog = await createStoreCatalog({
      postgres: () => Promise.resolve(schema.pool),
      clock: systemClock,
    });
    const { pipeline, breakers } = memoryPipeline({
      clock: systemClock,
      tools: catalog.registry,
      policy: catalog.policy,
      downstreamLimits: catalog.downstreamLimits,
      owner: 'it-catalog',
      settings: { resultTtlMs: 60_000, leaseMarginMs: 1_000 },
    });
    try {
      catalog.downstreams.faults.payments.loseResponseNext(1);
      const { result } = await pipeline.run(
        {
          id: 'call_1',
          name: 'issue_refund',
          arguments: { order_id: 'O-7788', amount: 34.5, reason: 'damaged' },
        },
        {
          principal: support,
          tenant: 't1',
          taskId: 'it-task',
          step: 0,
          index: 0,
          traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        },
      );
      expect(result.outcome).toBe('SUCCESS');
      expect(result.toolInvocations).toBe(2);
      const { rows } = await schema.pool.query<{ idempotency_key: string }>(
        "SELECT idempotency_key FROM store_refunds WHERE order_id = 'O-7788'",
      );
      expect(rows).toEqual([{ idempotency_key: result.idempotencyKey }]);
      // A second executor's catalog over the same database sees the same ledger.
      const other = buildStoreCatalog(
        await createPostgresDownstreams(schema.pool, { clock: systemClock }),
        systemClock,
      );
      expect(await other.downstreams.payments.ledger({ tenant: 't1', order_id: 'O-7788' })).toHaveLength(1);
    } finally {
      breakers.shutdown();
      await catalog.close();
      await schema.drop();
    }
  });
});
