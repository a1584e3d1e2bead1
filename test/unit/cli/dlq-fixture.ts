import { z } from 'zod';
import { MemoryCaseStore, MemoryIdempotencyStore } from '../../../libs/adapters/memory/index.js';
import { MemoryEventBus } from '../../../libs/bus/memory/memory-event-bus.js';
import { argumentsFingerprint } from '../../../libs/core/idempotency-key.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import type { DeadLetterInput, ReconciliationCase } from '../../../libs/ports/case-store.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { silentReconcilerLogger } from '../../../services/reconciler/logger.js';
import { createOperations, type Operations } from '../../../services/reconciler/operations.js';
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
    logger: silentReconcilerLogger,
    backoff: { firstDelayMs: 10, maxDelayMs: 100 },
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
      const callId = overrides.callId ?? `call-${n}`;
      const request = {
        callId,
        providerCallId: `prov-${n}`,
        tool: 'issue_refund',
        toolVersion: '1.0.0',
        tenant: 't1',
        taskId: 'task-1',
        step: 1,
        index: 0,
        idempotencyKey: `idem-${n}`,
        resourceKey: 't1:order:O-5512',
        principalId: 'agent-ann',
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        replyTopic: topics.results,
        replyPartition: 1,
        deadlineMs: null,
        requestedAtMs: T0 - 60_000,
        arguments: args,
      };
      const { case: c } = await cases.openFromDeadLetter({
        deadLetterId: `dl-${n}`,
        reason: 'UNRESOLVED',
        callId,
        tenant: 't1',
        tool: 'issue_refund',
        idempotencyKey: request.idempotencyKey,
        resourceKey: request.resourceKey,
        principalId: 'agent-ann',
        traceId: request.traceId,
        requestJson: JSON.stringify(request),
        errorCode: 'TIMEOUT',
        errorMessage: 'The payments service did not answer in time.',
        attemptsJson: '[]',
        lastKnownStateJson: null,
        createdAtMs: T0 - 30_000,
        ...overrides,
      });
      return c;
    },
    async unresolved(key, args) {
      const claim = await idempotency.claim(key, argumentsFingerprint(args), 'executor-1', 60_000);
      if (claim.kind !== 'claimed') throw new Error(`unexpected claim ${claim.kind}`);
      await idempotency.complete(
        key,
        'executor-1',
        { outcome: 'UNRESOLVED', result: { code: 'UNRESOLVED', message: 'unknown' }, completedAtMs: T0 - 1 },
        86_400_000,
      );
    },
    close: () => bus.close(),
  };
}
