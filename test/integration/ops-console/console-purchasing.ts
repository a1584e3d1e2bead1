import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { PostgresApprovalStore } from '../../../libs/adapters/postgres/approval-store.js';
import { PostgresSingleUseStore } from '../../../libs/adapters/postgres/single-use-store.js';
import { RedisIdempotencyStore } from '../../../libs/adapters/redis/redis-idempotency-store.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { ExecutionContext, NormalizedToolCall, Principal } from '../../../libs/core/types.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { toAuditEvent } from '../../../libs/runtime/audit-event.js';
import type { PurchaseOrderApi } from '../../../services/catalog/tools/purchase-order-backend.js';
import { schemaRegistryUrl } from '../../helpers/env.js';
import { uniqueName } from '../../helpers/names.js';
import { purchasingAgent, purchasingParts, purchasingPipeline } from '../../helpers/stack-purchasing.js';
import type { ConsoleStack } from './console-stack.js';

/**
 * A tool that refuses with the model's own text in its POLICY_VIOLATION message, as any tool that
 * quotes what it was asked to do may: whatever the model writes ends up in the audit log's reason.
 */
export const leaveNoteTool = defineTool({
  name: 'leave_note',
  version: '1.0.0',
  description: 'Leave a note for the warehouse team.',
  input: z.strictObject({ note: z.string().max(2_000) }),
  output: z.object({ ok: z.boolean() }),
  scopes: [],
  owner: 'test',
  stateChanging: false,
  auditFields: ['note'],
  execute: (args) =>
    Promise.reject(
      new ToolgateError('POLICY_VIOLATION', `Notes are closed today; your note was: ${args.note}`),
    ),
}) as unknown as ToolDefinition;

/**
 * Purchasing agents' calls through a real guard pipeline on the console's database (orders, the
 * single-use marks and the approval requests in Postgres) and the shared Redis, with `leave_note`
 * registered beside the purchase-order tools. Counts the orders the purchasing service was asked to
 * place.
 */
export async function purchasingOn(s: ConsoleStack) {
  const clock = systemClock;
  let creates = 0;
  const approvals = new PostgresApprovalStore(s.db.pool, clock);
  const purchasing = await purchasingParts(s.db.pool, {
    clock,
    key: { alg: 'HS256', secret: randomBytes(32) },
    singleUse: new PostgresSingleUseStore(s.db.pool),
    approvals,
    purchaseOrders: (orders): PurchaseOrderApi => ({
      supplier: (tenant, id) => orders.supplier(tenant, id),
      findByReference: (tenant, reference) => orders.findByReference(tenant, reference),
      list: (tenant) => orders.list(tenant),
      create: (request) => {
        creates += 1;
        return orders.create(request);
      },
    }),
  });
  const { pipeline, breakers } = purchasingPipeline(purchasing, {
    clock,
    owner: 'executor-1',
    idempotency: new RedisIdempotencyStore(s.redis.redis, { keyPrefix: s.redis.prefix }),
    otherTools: [leaveNoteTool],
  });
  const ctx = (principal: Principal = purchasingAgent): ExecutionContext => ({
    principal,
    tenant: principal.tenant,
    taskId: uniqueName('task'),
    step: 0,
    index: 0,
    traceId: randomBytes(16).toString('hex'),
  });
  const codec = await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics: s.topics });
  const producer = s.kafka.producer();
  await producer.connect();
  return {
    pipeline,
    approvals,
    orders: purchasing.orders,
    ctx,
    created: () => creates,
    run: (name: string, args: Record<string, unknown>, principal?: Principal) =>
      pipeline.run({ id: uniqueName('call'), name, arguments: args }, ctx(principal)),
    confirmCall: (args: Record<string, unknown>, token: string): NormalizedToolCall => ({
      id: uniqueName('call'),
      name: 'create_purchase_order',
      arguments: { ...args, preview_token: token },
    }),
    /** Publishes an attempt's audit record as the executor does (the audit sink stores it). */
    async publishAudit(record: Parameters<typeof toAuditEvent>[0], recordId: string) {
      const event = toAuditEvent(record, { recordId, producerId: 'executor-1' });
      await producer.send({
        topic: s.topics.audit,
        messages: [{ key: event.tenant, value: Buffer.from(await codec.encode('audit', event)) }],
      });
    },
    async close() {
      breakers.shutdown();
      await producer.disconnect();
    },
  };
}
