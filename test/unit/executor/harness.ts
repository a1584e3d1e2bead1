import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { MemoryIdempotencyStore, MemoryRateLimiter } from '../../../libs/adapters/memory/index.js';
import { createPrincipalVerifier } from '../../../libs/auth/principal-verifier.js';
import { MemoryEventBus } from '../../../libs/bus/memory/memory-event-bus.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { Principal } from '../../../libs/core/types.js';
import type { EventKind, EventKinds, ToolCallRequestedEvent } from '../../../libs/events/contracts.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import { defineCatalog } from '../../../libs/catalog/catalog.js';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import type {
  BusMessage,
  EventPublisher,
  KeyedSubscriber,
  OutgoingMessage,
} from '../../../libs/ports/event-bus.js';
import type { EventCodec } from '../../../libs/events/event-codec.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import type { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import {
  createExecutor,
  type ExecutorOptions,
  type GuardedExecutor,
} from '../../../services/executor/create-executor.js';
import type { Logger } from '../../../libs/ports/logger.js';
import { uniqueName } from '../../helpers/names.js';
import { publishRequests, signedRequest } from './call-requests.js';

export const ISSUER = 'agent-backend';
export const AUDIENCE = 'toolgate-executor';
export const TENANT = 't1';
export const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

export const PRINCIPAL: Principal = {
  id: 'agent-7',
  tenant: TENANT,
  kind: 'agent',
  scopes: ['stock:write'],
  roles: [],
};

/** A stock tool that records every invocation: which call, in which order, how many at once. */
export interface StockTool {
  readonly tool: ToolDefinition;
  readonly invocations: Array<{ sku: string; seq: number; taskId: string }>;
  readonly maxRunning: () => number;
}

export function stockTool(
  opts: { delayMs?: number; timeoutMs?: number; name?: string; ignoreAbort?: boolean } = {},
): StockTool {
  const invocations: StockTool['invocations'] = [];
  let running = 0;
  let maxRunning = 0;
  const tool = defineTool({
    name: opts.name ?? 'adjust_stock',
    version: '1.0.0',
    description: 'Adjust the stock count of one SKU by a signed quantity. Not for price changes.',
    input: z.object({ sku: z.string(), seq: z.number().int(), delta: z.number().int() }),
    output: z.object({ sku: z.string(), seq: z.number().int() }),
    scopes: ['stock:write'],
    owner: 'inventory',
    timeoutMs: opts.timeoutMs ?? 5_000,
    auditFields: ['sku', 'seq'],
    conflictKey: (args, ctx) => `${ctx.tenant}:stock:${args.sku}`,
    execute: async (args, inv) => {
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      try {
        invocations.push({ sku: args.sku, seq: args.seq, taskId: inv.ctx.taskId });
        if (opts.delayMs) {
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, opts.delayMs);
            if (!opts.ignoreAbort) {
              inv.signal.addEventListener('abort', () => {
                clearTimeout(timer);
                reject(inv.signal.reason as Error);
              });
            }
          });
        }
        return { sku: args.sku, seq: args.seq };
      } finally {
        running -= 1;
      }
    },
  });
  return { tool: tool as unknown as ToolDefinition, invocations, maxRunning: () => maxRunning };
}

/**
 * A tool whose downstream (`<name>-api`) keeps failing with HTTP `status`, `maxAttempts` attempts
 * per call, counting its invocations: for retry exhaustion and breaker tests.
 */
export function failingTool(
  name: string,
  stateChanging: boolean,
  status: number,
  maxAttempts = 2,
): { tool: ToolDefinition; calls: () => number } {
  let calls = 0;
  const tool = defineTool({
    name,
    version: '1.0.0',
    description: 'A downstream call that keeps failing with a server error, for exhaustion tests.',
    input: z.object({ sku: z.string(), seq: z.number(), delta: z.number() }),
    output: z.object({ ok: z.boolean() }),
    scopes: [],
    owner: 'test',
    stateChanging,
    downstream: `${name}-api`,
    ...(stateChanging ? { retrySafety: { kind: 'forwards-key' as const } } : {}),
    retry: { maxAttempts, baseDelayMs: 1, maxDelayMs: 2 },
    execute: () => {
      calls += 1;
      return Promise.reject(Object.assign(new Error('upstream broke'), { status }));
    },
  });
  return { tool: tool as unknown as ToolDefinition, calls: () => calls };
}

export interface LogEntry {
  readonly level: string;
  readonly obj: object;
  readonly msg: string | undefined;
}

export function recordingLogger(entries: LogEntry[]): Logger {
  const at =
    (level: string) =>
    (obj: object, msg?: string): void => {
      entries.push({ level, obj, msg });
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export interface Harness {
  readonly bus: MemoryEventBus;
  readonly topics: TopicNames;
  readonly codec: LocalEventCodec;
  readonly signingKey: KeyObject;
  readonly logs: LogEntry[];
  readonly registry: ToolRegistry;
  /**
   * Builds (does not start) an executor through `createExecutor`, over the harness's bus, codec,
   * idempotency store and rate limiter (shared by its executors), with breakers of its own that
   * take 100 calls to open. `overrides` replace any option; `settings` are merged into the
   * harness's. Stopped on close.
   */
  executor(overrides?: Partial<ExecutorOptions>): GuardedExecutor;
  /** A signed request for `tool` with the given arguments; the idempotency key is computed as the SDK does. */
  request(
    args: Record<string, unknown>,
    overrides?: Partial<ToolCallRequestedEvent> & { principal?: Principal },
  ): Promise<ToolCallRequestedEvent>;
  /** Publishes requests to the calls topic (key = resourceKey), with a traceparent header. */
  publishCalls(requests: readonly ToolCallRequestedEvent[]): Promise<void>;
  publishRaw(key: string, value: Buffer): Promise<void>;
  /** Reads `count` messages of a topic (from the beginning, with a fresh group) and decodes them. */
  read<K extends EventKind>(
    kind: K,
    count: number,
    timeoutMs?: number,
  ): Promise<Array<{ message: BusMessage; event: EventKinds[K] }>>;
  close(): Promise<void>;
}

export const RESULT_PARTITIONS = 4;
export const REPLY_PARTITION = 2;

let callSeq = 0;

export async function createHarness(tools: readonly ToolDefinition[], callsPartitions = 3): Promise<Harness> {
  const bus = new MemoryEventBus({ commitIntervalMs: 10, redeliveryDelayMs: 10 });
  const topics = topicNames(uniqueName('unit'));
  await bus.ensureTopics([
    { topic: topics.calls, partitions: callsPartitions },
    { topic: topics.results, partitions: RESULT_PARTITIONS },
    { topic: topics.audit, partitions: 1 },
    { topic: topics.dlq, partitions: 1 },
  ]);
  const codec = new LocalEventCodec();
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const catalog = defineCatalog({ tools, policy: createPolicyEngine({ version: 'unit' }, []) });
  const { registry } = catalog;
  const idempotency = new MemoryIdempotencyStore(systemClock);
  const rateLimiter = new MemoryRateLimiter(systemClock);
  const verifier = createPrincipalVerifier({ keys: { k1: publicKey }, issuer: ISSUER, audience: AUDIENCE });
  const logs: LogEntry[] = [];
  const executors: GuardedExecutor[] = [];

  const harness: Harness = {
    bus,
    topics,
    codec,
    signingKey: privateKey,
    logs,
    registry,
    executor(overrides = {}) {
      const executor = createExecutor({
        catalog,
        bus,
        codec,
        topics,
        replyTopics: { [topics.results]: RESULT_PARTITIONS },
        idempotency,
        rateLimiter,
        verifier,
        clock: systemClock,
        logger: recordingLogger(logs),
        ownerId: 'executor-unit',
        groupId: `${topics.calls}-executors`,
        backoff: { baseDelayMs: 5, maxDelayMs: 20 },
        ...overrides,
        settings: {
          maxConcurrency: 24,
          breaker: { errorPercent: 50, volume: 100, resetMs: 30_000 },
          resultTtlMs: 60_000,
          leaseMarginMs: 200,
          ...overrides.settings,
        },
      });
      executors.push(executor);
      return executor;
    },
    async request(args, overrides = {}) {
      callSeq += 1;
      const { principal = PRINCIPAL, ...fields } = overrides;
      return signedRequest(
        {
          callId: `call-${callSeq}`,
          providerCallId: `toolu_${callSeq}`,
          tool: 'adjust_stock',
          toolVersion: null,
          argumentsJson: JSON.stringify(args),
          tenant: TENANT,
          taskId: `task-${callSeq}`,
          step: 1,
          index: 0,
          resourceKey: `${TENANT}:stock:${String(args.sku)}`,
          traceId: TRACE_ID,
          replyTopic: topics.results,
          replyPartition: REPLY_PARTITION,
          deadlineMs: null,
          requestedAtMs: Date.now(),
        },
        principal,
        { key: privateKey, issuer: ISSUER, audience: AUDIENCE, kid: 'k1', ttlSeconds: 300 },
        fields,
      );
    },
    publishCalls: (requests) => publishRequests(bus, codec, topics.calls, requests),
    publishRaw: (key, value) => bus.publish(topics.calls, [{ key, value }]),
    async read(kind, count, timeoutMs = 5_000) {
      const got: Array<{ message: BusMessage; event: EventKinds[typeof kind] }> = [];
      let resolveDone!: () => void;
      const done = new Promise<void>((resolve) => (resolveDone = resolve));
      const sub = await bus.subscribe(
        {
          groupId: uniqueName('reader'),
          topics: [topics[kind]],
          fromBeginning: true,
          partitionsConcurrently: 8,
        },
        async (batch, control) => {
          for (const message of batch.messages) {
            got.push({ message, event: await codec.decode(kind, message.value) });
            control.markDone(message.offset);
          }
          if (got.length >= count) resolveDone();
        },
      );
      const timer = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs));
      await Promise.race([done, timer]);
      await sub.stop();
      if (got.length < count) throw new Error(`read ${got.length} of ${count} ${kind} messages`);
      return got;
    },
    async close() {
      await Promise.all(executors.map((e) => e.stop()));
      await bus.close();
    },
  };
  return harness;
}

/** Wraps a bus so a test can make publishes to one topic fail; subscribing is left alone. */
export function flakyPublisher(
  inner: EventPublisher & KeyedSubscriber,
  fail: (topic: string, messages: readonly OutgoingMessage[]) => boolean,
): EventPublisher & KeyedSubscriber & { readonly attempts: Array<{ topic: string; failed: boolean }> } {
  const attempts: Array<{ topic: string; failed: boolean }> = [];
  return {
    attempts,
    publish(topic, messages) {
      const failed = fail(topic, messages);
      attempts.push({ topic, failed });
      return failed ? Promise.reject(new Error('broker said no')) : inner.publish(topic, messages);
    },
    subscribeKeyed: (options, handler) => inner.subscribeKeyed(options, handler),
  };
}

/** Wraps a codec so decoding fails with DEPENDENCY_UNAVAILABLE while `down()` is true. */
export function outageCodec(
  inner: EventCodec,
  down: () => boolean,
): EventCodec & { readonly failures: () => number } {
  let failures = 0;
  return {
    failures: () => failures,
    encode: (kind, value) => inner.encode(kind, value),
    async decode(kind, bytes) {
      if (down()) {
        failures += 1;
        throw new ToolgateError('DEPENDENCY_UNAVAILABLE', 'schema registry unavailable');
      }
      return inner.decode(kind, bytes);
    },
  };
}
