import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { PostgresSingleUseStore } from '../../../libs/adapters/postgres/single-use-store.js';
import { RedisIdempotencyStore } from '../../../libs/adapters/redis/redis-idempotency-store.js';
import { RedisSingleUseStore } from '../../../libs/adapters/redis/single-use-store.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { ExecutionContext, NormalizedToolCall } from '../../../libs/core/types.js';
import { type PreviewKey } from '../../../libs/patterns/preview/index.js';
import type { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import type { SingleUseStore } from '../../../libs/ports/single-use-store.js';
import type { ApprovalStore } from '../../../libs/ports/approval-store.js';
import { PostgresApprovalStore } from '../../../libs/adapters/postgres/approval-store.js';
import { storeTools } from '../../../services/catalog/index.js';
import type { PostgresPurchaseOrders } from '../../../services/catalog/tools/purchase-order-postgres.js';
import type { PreviewPurchaseOrderOutput } from '../../../services/catalog/tools/purchase-order-preview.js';
import { DATABASE_URL, REDIS_URL } from '../../helpers/env.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { purchasingAgent, purchasingParts, purchasingPipeline } from '../../helpers/stack-purchasing.js';

const ctx = (taskId = uniqueName('task')): ExecutionContext => ({
  principal: purchasingAgent,
  tenant: 't1',
  taskId,
  step: 0,
  index: 0,
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
});

let seq = 0;
const call = (name: string, args: Record<string, unknown>): NormalizedToolCall => ({
  id: `call_${++seq}`,
  name,
  arguments: args,
});

/** One executor: its own pools and clients on the shared servers, the shared preview key. */
interface Executor {
  readonly pipeline: GuardPipeline;
  readonly singleUse: SingleUseStore;
  readonly approvals: ApprovalStore;
  readonly orders: PostgresPurchaseOrders;
  close(): Promise<void>;
}

async function executor(
  schema: TestSchema,
  key: PreviewKey,
  redisPrefix: string,
  singleUseKind: 'redis' | 'postgres',
  name: string,
): Promise<Executor> {
  const pool = new pg.Pool({
    connectionString: DATABASE_URL,
    max: 5,
    options: `-c search_path="${schema.schema}"`,
  });
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const clock = systemClock;
  const singleUse: SingleUseStore =
    singleUseKind === 'redis'
      ? new RedisSingleUseStore(redis, { keyPrefix: redisPrefix })
      : new PostgresSingleUseStore(pool);
  const approvals = new PostgresApprovalStore(pool, clock);
  const purchasing = await purchasingParts(pool, { clock, key, singleUse, approvals });
  const { pipeline, breakers } = purchasingPipeline(purchasing, {
    clock,
    owner: name,
    idempotency: new RedisIdempotencyStore(redis, { keyPrefix: redisPrefix }),
    otherTools: storeTools(purchasing.downstreams, clock),
    settings: { resultTtlMs: 600_000, leaseMarginMs: 5_000 },
  });
  return {
    pipeline,
    singleUse,
    approvals,
    orders: purchasing.orders,
    async close() {
      breakers.shutdown();
      await redis.quit();
      await pool.end();
    },
  };
}

describe.each(['redis', 'postgres'] as const)(
  'preview/confirm across two executors, single-use store on %s',
  (kind) => {
    let schema: TestSchema;
    let a: Executor;
    let b: Executor;
    let prefix: string;
    const key: PreviewKey = { alg: 'HS256', secret: randomBytes(32) };

    beforeAll(async () => {
      schema = await createTestSchema('preview');
      await migrate(schema.pool);
      prefix = `${uniqueName('preview')}:`;
      a = await executor(schema, key, prefix, kind, 'executor-a');
      b = await executor(schema, key, prefix, kind, 'executor-b');
    });
    afterAll(async () => {
      await a.close();
      await b.close();
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
      await schema.drop();
    });

    async function preview(args: Record<string, unknown>): Promise<PreviewPurchaseOrderOutput> {
      const { result } = await a.pipeline.run(call('preview_purchase_order', args), ctx());
      expect(result.outcome).toBe('SUCCESS');
      return result.payload as PreviewPurchaseOrderOutput;
    }
    const placed = async (): Promise<number> => (await a.orders.list('t1')).length;

    it('one token confirmed by two executors at once in two calls places one order; the other is refused', async () => {
      const before = await placed();
      const args = { sku: 'SKU-12', quantity: 5, supplier_id: 'SUP-1' };
      const p = await preview(args);
      const confirm = { ...args, preview_token: p.preview_token };
      const [ra, rb] = await Promise.all([
        a.pipeline.run(call('create_purchase_order', confirm), ctx()),
        b.pipeline.run(call('create_purchase_order', confirm), ctx()),
      ]);
      const outcomes = [ra.result.outcome, rb.result.outcome].sort();
      expect(outcomes).toEqual(['EXECUTION_ERROR', 'SUCCESS']);
      const refused = ra.result.outcome === 'SUCCESS' ? rb.result : ra.result;
      expect(refused.error?.message).toContain('already used');
      expect(await placed()).toBe(before + 1);
    });

    it('approval recorded through one executor lets the confirm pass on the other, once', async () => {
      const before = await placed();
      const args = { sku: 'SKU-21', quantity: 4, supplier_id: 'SUP-2' };
      const p = await preview(args);
      expect(p.requires_approval).toBe(true);
      const confirm = call('create_purchase_order', { ...args, preview_token: p.preview_token });
      const c = ctx();
      const waiting = await b.pipeline.run(confirm, c);
      expect(waiting.result.outcome).toBe('POLICY_VIOLATION');
      expect(waiting.result.error?.message).toContain('awaiting approval');
      expect((await a.approvals.approve(p.preview_id, 'operator:M-1', 'restock')).ok).toBe(true);
      const ok = await b.pipeline.run(confirm, c);
      expect(ok.result.outcome).toBe('SUCCESS');
      expect(ok.result.payload).toMatchObject({ approved_by: 'M-1' });
      const replay = await a.pipeline.run(
        call('create_purchase_order', { ...args, preview_token: p.preview_token }),
        ctx(),
      );
      expect(replay.result.error?.message).toContain('already used');
      expect(await placed()).toBe(before + 1);
    });

    it('stock changed in Postgres between preview and confirm: refused, nothing placed', async () => {
      const before = await placed();
      const args = { sku: 'SKU-3', quantity: 20, supplier_id: 'SUP-1' };
      const p = await preview(args);
      const moved = await b.pipeline.run(
        call('update_inventory', { sku: 'SKU-3', delta: 4, reason: 'received' }),
        ctx(),
      );
      expect(moved.result.outcome).toBe('SUCCESS');
      const { result } = await a.pipeline.run(
        call('create_purchase_order', { ...args, preview_token: p.preview_token }),
        ctx(),
      );
      expect(result.error?.message).toContain('The resource changed since the preview');
      expect(await placed()).toBe(before);
    });

    it('the purchasing service dedupes on the reference: one order however often a reference is sent', async () => {
      const supplier = (await a.orders.supplier('t1', 'SUP-1'))!;
      const quote = {
        supplier_id: supplier.supplier_id,
        supplier_name: supplier.name,
        currency: 'USD' as const,
        lines: [
          {
            sku: 'SKU-7',
            name: 'Countertop blender',
            quantity: 1,
            unit_cost_cents: 2_600,
            line_total_cents: 2_600,
          },
        ],
        subtotal_cents: 2_600,
        tax_cents: 208,
        shipping_cents: 2_500,
        total_cents: 5_308,
        lead_days: 5,
      };
      const reference = uniqueName('ref');
      const request = { tenant: 't1', reference, quote, requested_by: 'x', approved_by: null };
      const placedOrders = await Promise.all([
        a.orders.create(request),
        b.orders.create(request),
        a.orders.create(request),
      ]);
      expect(new Set(placedOrders.map((o) => o.po_id)).size).toBe(1);
      expect((await a.orders.list('t1')).filter((o) => o.reference === reference)).toHaveLength(1);
    });
  },
);
