import { z } from 'zod';
import { MemoryCaseStore, MemoryIdempotencyStore } from '../../../libs/adapters/memory/index.js';
import { MemoryEventBus } from '../../../libs/bus/memory/memory-event-bus.js';
import { argumentsFingerprint } from '../../../libs/core/idempotency-key.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import type {
  AuditRecordEvent,
  DeadLetterEvent,
  ToolCallRequestedEvent,
  ToolCallResultEvent,
} from '../../../libs/events/contracts.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import type { BusMessage, Subscription } from '../../../libs/ports/event-bus.js';
import type { StoredResult } from '../../../libs/ports/idempotency-store.js';
import { defineTool, type ToolDefinitionInput } from '../../../libs/registry/define-tool.js';
import type {
  StatusCheckAnswer,
  ToolDefinition,
  ToolInvocation,
} from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import { createOperations, type Operations } from '../../../libs/reconcile/operations.js';
import {
  createReconciler,
  type Reconciler,
  type ReconcilerDeps,
} from '../../../services/reconciler/reconciler.js';
import { topicSpecs } from '../../helpers/bus-topics.js';
import { uniqueName } from '../../helpers/names.js';

export const T0 = 1_800_000_000_000;
export const TENANT = 't1';
export const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
export const RESULT_PARTITIONS = 4;
/** The arguments of the filing call every dead letter carries unless told otherwise. */
export const FILING_ARGS = { taxpayerId: 'TP-1', year: 2024 };
export const UNRESOLVED_RECORD: StoredResult = {
  outcome: 'UNRESOLVED',
  result: { code: 'UNRESOLVED', message: 'outcome unknown' },
  completedAtMs: T0 - 1,
};

/** One status check as the tool saw it. */
export interface CheckCall {
  readonly atMs: number;
  readonly args: unknown;
  readonly inv: ToolInvocation;
}

/**
 * What the scripted status check answers next: an answer, an error to throw, or 'hang' (never
 * settles, so only the timeout ends it). When the script runs out it answers unknown.
 */
export type Scripted = StatusCheckAnswer | Error | 'hang';

const filingInput = z.object({ taxpayerId: z.string(), year: z.number().int() });
const filingOutput = z.object({ confirmation: z.string(), status: z.string() });

/** What a tool of these tests does when run: it rejects, since reconciling never runs a tool. */
export const neverRuns = (): Promise<never> => Promise.reject(new Error('reconciling never runs the tool'));

/**
 * A tool for reconciling tests: version 1.0.0, no scopes, and {@link neverRuns} as its `execute`
 * (a status-check tool declares it as its `retrySafety.apply` instead); `def` gives the rest (name,
 * description, schemas, owner, ...).
 */
export function reconciledTool<I, O>(
  def: Omit<ToolDefinitionInput<I, O>, 'version' | 'scopes' | 'execute'>,
): ToolDefinition<I, O> {
  return defineTool({
    version: '1.0.0',
    scopes: [],
    ...(def.retrySafety?.kind === 'status-check' ? {} : { execute: neverRuns }),
    ...def,
  });
}

/** A reconciler over in-memory adapters on a manual clock, with observers on its outputs. */
export interface Harness {
  readonly clock: ManualClock;
  readonly bus: MemoryEventBus;
  readonly topics: TopicNames;
  readonly codec: LocalEventCodec;
  readonly cases: MemoryCaseStore;
  readonly idempotency: MemoryIdempotencyStore;
  readonly registry: ToolRegistry;
  readonly reconciler: Reconciler;
  readonly ops: Operations;
  /** The reconcilers' group on the dead-letter topic. */
  readonly groupId: string;
  /** Answers the filing tool's status check gives, in order. */
  readonly script: Scripted[];
  readonly checks: CheckCall[];
  readonly results: Array<{ event: ToolCallResultEvent; message: BusMessage }>;
  readonly audits: AuditRecordEvent[];
  readonly calls: ToolCallRequestedEvent[];
  publishDeadLetter(letter: DeadLetterEvent): Promise<void>;
  publishRaw(topic: string, value: Buffer): Promise<void>;
  /** Records an UNRESOLVED outcome for `key`, as the executor leaves it. */
  recordUnresolved(key: string, args: unknown): Promise<void>;
  /** Waits (real time) until the reconcilers' group has committed past every dead letter published. */
  drained(): Promise<void>;
  /** Waits (real time) until the case for `callId` (or dead letter) exists and has been triaged. */
  triaged(ref: { callId: string } | { deadLetterId: string }): Promise<ReconciliationCase>;
  /**
   * Opens an UNRESOLVED case for the filing call `callId`: records its UNRESOLVED idempotency record
   * (for {@link FILING_ARGS}), starts the reconciler, publishes the dead letter and waits until the
   * case is triaged.
   */
  openUnresolved(callId: string): Promise<ReconciliationCase>;
  /** What a second executor's claim of the filing call `callId` (same key and arguments) finds now. */
  claimAgain(callId: string): ReturnType<MemoryIdempotencyStore['claim']>;
  close(): Promise<void>;
}

export async function createHarness(overrides: Partial<ReconcilerDeps> = {}): Promise<Harness> {
  const clock = new ManualClock(T0);
  const bus = new MemoryEventBus({ commitIntervalMs: 5, redeliveryDelayMs: 5 });
  const topics = topicNames(uniqueName('rc'));
  await bus.ensureTopics(topicSpecs(topics, { calls: 2, results: RESULT_PARTITIONS, audit: 2, dlq: 2 }));
  const codec = new LocalEventCodec();
  const cases = new MemoryCaseStore(clock);
  const idempotency = new MemoryIdempotencyStore(clock);
  const script: Scripted[] = [];
  const checks: CheckCall[] = [];
  const registry = new ToolRegistry();
  registry.register(
    reconciledTool({
      name: 'submit_filing',
      description: 'Submit a tax filing for one taxpayer and year.',
      input: filingInput,
      output: filingOutput,
      owner: 'filings-team',
      timeoutMs: 2_000,
      auditFields: ['year'],
      retrySafety: {
        kind: 'status-check',
        check: (args, inv) => {
          checks.push({ atMs: clock.now(), args, inv });
          const next = script.shift() ?? { state: 'unknown' };
          if (next === 'hang') return new Promise<never>(() => undefined);
          if (next instanceof Error) return Promise.reject(next);
          return Promise.resolve(next);
        },
        apply: neverRuns,
      },
    }),
  );
  registry.register(
    reconciledTool({
      name: 'send_wire',
      description: 'Send a wire transfer.',
      input: z.object({ amount: z.number() }),
      output: z.object({ wireId: z.string() }),
      owner: 'payments-team',
    }),
  );

  const deps: ReconcilerDeps = {
    subscriber: bus,
    publisher: bus,
    codec,
    topics,
    cases,
    idempotency,
    tools: registry,
    clock,
    logger: silentLogger,
    reconcilerId: 'reconciler-1',
    groupId: uniqueName('reconcilers'),
    replyTopics: { [topics.results]: RESULT_PARTITIONS },
    resultTtlMs: 86_400_000,
    pollIntervalMs: 100,
    ...overrides,
  };
  const reconciler = createReconciler(deps);
  const ops = createOperations({
    ...deps,
    backoff: { baseDelayMs: 10, maxDelayMs: 100 },
    firstCheckWaitMs: (deps.checkScheduleMs ?? [1_000])[0]!,
    resubmitGraceMs: 5_000,
  });

  const results: Harness['results'] = [];
  const audits: AuditRecordEvent[] = [];
  const calls: ToolCallRequestedEvent[] = [];
  const observer: Subscription = await bus.subscribe(
    {
      groupId: uniqueName('observer'),
      topics: [topics.results, topics.audit, topics.calls],
      fromBeginning: true,
    },
    async (batch, control) => {
      for (const message of batch.messages) {
        if (batch.topic === topics.results) {
          results.push({ event: await codec.decode('results', message.value), message });
        } else if (batch.topic === topics.audit) {
          audits.push(await codec.decode('audit', message.value));
        } else {
          calls.push(await codec.decode('calls', message.value));
        }
        control.markDone(message.offset);
      }
    },
  );

  const harness: Harness = {
    clock,
    bus,
    topics,
    codec,
    cases,
    idempotency,
    registry,
    reconciler,
    ops,
    groupId: deps.groupId,
    script,
    checks,
    results,
    audits,
    calls,
    async publishDeadLetter(letter) {
      await bus.publish(topics.dlq, [
        { key: letter.resourceKey ?? letter.deadLetterId, value: await codec.encode('dlq', letter) },
      ]);
    },
    async publishRaw(topic, value) {
      await bus.publish(topic, [{ key: 'raw', value }]);
    },
    async recordUnresolved(key, args) {
      const fp = argumentsFingerprint(args);
      const claim = await idempotency.claim(key, fp, 'executor-1', 60_000);
      if (claim.kind !== 'claimed') throw new Error(`unexpected claim ${claim.kind}`);
      await idempotency.complete(key, 'executor-1', UNRESOLVED_RECORD, 86_400_000);
    },
    async drained() {
      await eventually(() =>
        [0, 1].every(
          (p) => (bus.committedOffset(deps.groupId, topics.dlq, p) ?? '0') === bus.endOffset(topics.dlq, p),
        )
          ? true
          : undefined,
      );
    },
    async triaged(ref) {
      return eventually(async () => {
        const c = await cases.get(ref);
        return c !== undefined && c.history.length > 0 ? c : undefined;
      });
    },
    async openUnresolved(callId) {
      const letter = deadLetter(topics, { callId });
      await harness.recordUnresolved(letter.idempotencyKey!, FILING_ARGS);
      await reconciler.start();
      await harness.publishDeadLetter(letter);
      return harness.triaged({ callId });
    },
    claimAgain: (callId) =>
      idempotency.claim(`tg1:key-${callId}`, argumentsFingerprint(FILING_ARGS), 'executor-2', 60_000),
    async close() {
      await reconciler.stop();
      await observer.stop();
      await bus.close();
    },
  };
  return harness;
}

/** Polls (real time) until `probe` gives a value; fails after 5 s. */
export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const until = Date.now() + 5_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export interface LetterOptions {
  readonly callId: string;
  readonly reason?: DeadLetterEvent['reason'];
  readonly tool?: string;
  readonly args?: Record<string, unknown>;
  readonly idempotencyKey?: string;
  readonly replyPartition?: number;
  readonly replyTopic?: string;
  readonly errorCode?: string;
}

/** A dead letter as the executor writes one (request without its assertion, arguments parsed). */
export function deadLetter(topics: TopicNames, o: LetterOptions): DeadLetterEvent {
  const reason = o.reason ?? 'UNRESOLVED';
  const tool = o.tool ?? 'submit_filing';
  const args = o.args ?? FILING_ARGS;
  const idempotencyKey = o.idempotencyKey ?? `tg1:key-${o.callId}`;
  const request = {
    callId: o.callId,
    providerCallId: `prov-${o.callId}`,
    tool,
    toolVersion: null,
    tenant: TENANT,
    taskId: 'task-1',
    step: 3,
    index: 0,
    idempotencyKey,
    resourceKey: `${TENANT}:filing:TP-1`,
    principalId: 'u-42',
    traceId: TRACE,
    replyTopic: o.replyTopic ?? topics.results,
    replyPartition: o.replyPartition ?? 2,
    deadlineMs: T0 - 10,
    requestedAtMs: T0 - 5_000,
    arguments: args,
  };
  const errorCode = o.errorCode ?? (reason === 'UNRESOLVED' ? 'UNRESOLVED' : 'SERVER_ERROR');
  return {
    deadLetterId: `${reason}:${o.callId}`,
    reason,
    callId: o.callId,
    tenant: TENANT,
    tool,
    idempotencyKey,
    resourceKey: request.resourceKey,
    principalId: 'u-42',
    traceId: TRACE,
    requestJson: JSON.stringify(request),
    errorCode,
    errorMessage: reason === 'UNRESOLVED' ? 'timed out; outcome unknown' : 'downstream failed',
    attemptsJson: JSON.stringify([
      { attempt: 1, startedAtMs: T0 - 4_000, durationMs: 2_000, result: 'TIMEOUT' },
    ]),
    lastKnownStateJson: JSON.stringify({
      outcome: reason === 'UNRESOLVED' ? 'UNRESOLVED' : 'EXECUTION_ERROR',
      toolVersion: '1.0.0',
      toolInvocations: 1,
    }),
    originalTopic: topics.calls,
    originalPartition: 0,
    originalOffset: '7',
    originalKey: request.resourceKey,
    rawPayloadBase64: null,
    producerId: 'executor-1',
    createdAtMs: T0 - 1_000,
  };
}
