import { z } from 'zod';
import { MemoryCaseStore, MemoryIdempotencyStore } from '../../../libs/adapters/memory/index.js';
import { MemoryEventBus } from '../../../libs/bus/memory/memory-event-bus.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import type { DeadLetterInput, ReconciliationCase } from '../../../libs/ports/case-store.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import { createOperations, type Operations } from '../../../libs/reconcile/operations.js';
import { deadLetteredRefund, leaveUnresolved } from '../../helpers/dead-lettered-refund.js';
import { uniqueName } from '../../helpers/names.js';

export const T0 = Date.UTC(2025, 2, 1, 12);

/** Reconciliation operations over in-memory stores and bus, as the dlq commands see them. */
export interface DlqFixture {
  readonly clock: ManualClock;
  readonly cases: MemoryCaseStore;
  readonly idempotency: MemoryIdempotencyStore;
  readonly bus: MemoryEventBus;
  readonly topics: TopicNames;
  readonly ops: Operations;
  /** Opens a case for a dead-lettered issue_refund call with a full request; override anything. */
  open(overrides?: Partial<DeadLetterInput>, args?: Record<string, unknown>): Promise<ReconciliationCase>;
  /** Leaves an UNRESOLVED idempotency record for the key, as the executor does. */
  unresolved(key: string, args: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

let n = 0;

export async function dlqFixture(): Promise<DlqFixture> {
  const clock = new ManualClock(T0);
  const cases = new MemoryCaseStore(clock);
  const idempotency = new MemoryIdempotencyStore(clock);
  const bus = new MemoryEventBus();
  const topics = topicNames(uniqueName('cli'));
  await bus.ensureTopics(Object.values(topics).map((topic) => ({ topic, partitions: 2 })));
  const registry = new ToolRegistry();
  registry.register(
    defineTool({
      name: 'issue_refund',
      version: '1.0.0',
      description: 'Refund an order.',
      input: z.object({ orderId: z.string(), amountCents: z.number().int() }),
      output: z.object({ refundId: z.string(), amountCents: z.number().int() }),
      scopes: [],
      owner: 'payments',
      auditFields: ['orderId'],
      execute: () => Promise.reject(new Error('the CLI never runs a tool')),
    }),
  );
  const ops = createOperations({
    cases,
    tools: registry,
    publisher: bus,
    codec: new LocalEventCodec(),
    topics,
    idempotency,
    clock,
    logger: silentLogger,
    backoff: { baseDelayMs: 10, maxDelayMs: 100 },
    replyTopics: { [topics.results]: 2 },
    resultTtlMs: 86_400_000,
  });
  return {
    clock,
    cases,
    idempotency,
    bus,
    topics,
    ops,
    async open(overrides = {}, args = { orderId: 'O-5512', amountCents: 1200 }) {
      n += 1;
      const { case: c } = await cases.openFromDeadLetter({
        ...deadLetteredRefund({
          callId: overrides.callId ?? `call-${n}`,
          providerCallId: `prov-${n}`,
          idempotencyKey: `idem-${n}`,
          deadLetterId: `dl-${n}`,
          replyTopic: topics.results,
          arguments: args,
          nowMs: T0,
          lastKnownStateJson: null,
        }),
        ...overrides,
      });
      return c;
    },
    unresolved: (key, args) => leaveUnresolved(idempotency, key, args, T0 - 1, 86_400_000),
    close: () => bus.close(),
  };
}
