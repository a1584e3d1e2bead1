import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../libs/adapters/postgres/migrate.js';
import { PostgresApprovalStore } from '../../libs/adapters/postgres/approval-store.js';
import { RedisSingleUseStore } from '../../libs/adapters/redis/single-use-store.js';
import { systemClock } from '../../libs/core/system-clock.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import type { PostgresPurchaseOrders } from '../../services/catalog/tools/purchase-order-postgres.js';
import { purchasingAgent, purchasingParts } from '../helpers/stack-purchasing.js';
import { createExecutorStack, type ExecutorStack } from '../integration/executor/executor-stack.js';
import { chaosPipeline, type ChaosPipeline } from './chaos-pipeline.js';
import { collectTopic, type TopicCollector } from './topic-collector.js';

/**
 * Scenario 4, preview tokens (libs/patterns/preview) through Kafka and the executor: a purchase
 * order previewed, then confirmed once with its token; the same token replayed by new calls, a
 * tampered token, and a token presented with other arguments are all refused with a reason, and
 * the purchasing service (Postgres) holds exactly one order.
 */
const ORDER = { sku: 'SKU-7', quantity: 10, supplier_id: 'SUP-1' };

let stack: ExecutorStack;
let built: ChaosPipeline;
let orders: PostgresPurchaseOrders;
let results: TopicCollector<'results'>;
let audit: TopicCollector<'audit'>;

beforeAll(async () => {
  stack = await createExecutorStack('chaos_preview');
  await migrate(stack.db.pool);
  const purchasing = await purchasingParts(stack.db.pool, {
    clock: systemClock,
    key: { alg: 'HS256', secret: randomBytes(32) },
    singleUse: new RedisSingleUseStore(stack.redis.redis, { keyPrefix: stack.redis.prefix }),
    approvals: new PostgresApprovalStore(stack.db.pool, systemClock),
  });
  orders = purchasing.orders;
  built = chaosPipeline({
    redis: stack.redis.redis,
    keyPrefix: stack.redis.prefix,
    policy: purchasing.policy,
    tools: purchasing.tools,
  });
  results = await collectTopic(stack, 'results');
  audit = await collectTopic(stack, 'audit');
});

afterAll(async () => {
  await results.stop();
  await audit.stop();
  built.breakers.shutdown();
  await stack.close();
});

let n = 0;
async function call(tool: string, args: Record<string, unknown>): Promise<ToolCallRequestedEvent> {
  n += 1;
  const request = await stack.request(args, {
    principal: purchasingAgent,
    callId: `${stack.prefix}-po${n}`,
    tool,
    index: n,
    resourceKey: 't1:inventory:SKU-7',
  });
  await stack.publishCalls([request]);
  await results.until(
    () => results.events.some((e) => e.callId === request.callId),
    30_000,
    () => `the answer to ${tool} #${n}`,
  );
  return request;
}
const answer = (r: ToolCallRequestedEvent) => results.events.find((e) => e.callId === r.callId)!;

describe('preview tokens under replay and tampering', () => {
  it('one order from one token; replayed, tampered and re-bound tokens refused and audited', async () => {
    const executor = stack.executor(built);
    await executor.start();
    try {
      const preview = answer(await call('preview_purchase_order', ORDER));
      expect(preview.outcome).toBe('SUCCESS');
      const token = (JSON.parse(preview.payloadJson!) as { preview_token: string }).preview_token;
      const placed = answer(await call('create_purchase_order', { ...ORDER, preview_token: token }));
      expect(placed.outcome, JSON.stringify(placed.error)).toBe('SUCCESS');

      const last = token.at(-2) === 'A' ? 'B' : 'A';
      const bad = [
        ['replayed', { ...ORDER, preview_token: token }],
        ['replayed again', { ...ORDER, preview_token: token }],
        ['tampered', { ...ORDER, preview_token: `${token.slice(0, -2)}${last}${token.at(-1)}` }],
        ['other arguments', { ...ORDER, quantity: 11, preview_token: token }],
      ] as const;
      const refusals: Record<string, string> = {};
      for (const [what, args] of bad) {
        const r = answer(await call('create_purchase_order', args));
        refusals[what] = `${r.outcome}:${r.error?.code ?? ''}: ${r.error?.message ?? ''}`;
        expect(r.outcome, what).not.toBe('SUCCESS');
        expect(r.error?.message, what).toBeTruthy();
        await audit.until(
          () => audit.events.some((a) => a.callId === r.callId),
          15_000,
          () => `the audit record of ${what}`,
        );
      }
      const inPostgres = await orders.list('t1');
      console.log(`[chaos preview] ${JSON.stringify({ ordersPlaced: inPostgres.length, refusals })}`);
      expect(inPostgres).toHaveLength(1);
    } finally {
      await executor.stop();
    }
  });
});
