/**
 * Wiring for benchmarks on the real servers: the Kafka event bus, the registry codec, Redis
 * idempotency and rate limits, and the executor built by `createExecutor` as production builds it
 * (breakers, outbound limiter, guard pipeline, instrumentation) — plus counting wrappers around the
 * executor's bus and its pipeline runs, so a benchmark knows when the first batch arrived and when
 * the last result was acknowledged by the broker, without a consumer of its own competing for the
 * CPU.
 */
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JWK } from 'jose';
import { Redis } from 'ioredis';
import { RedisIdempotencyStore, RedisRateLimiter } from '../../libs/adapters/redis/index.js';
import { SERVICE_REDIS_OPTIONS } from '../../libs/adapters/redis/connect.js';
import { createPrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import { signPrincipal } from '../../libs/auth/sign-principal.js';
import { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import { idempotencyKey } from '../../libs/core/idempotency-key.js';
import { systemClock } from '../../libs/core/system-clock.js';
import type { Principal } from '../../libs/core/types.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import { RegistryEventCodec } from '../../libs/events/registry-codec.js';
import { topicNames, type TopicNames } from '../../libs/events/topics.js';
import type { EventPublisher, KeyedSubscriber, OutgoingMessage } from '../../libs/ports/event-bus.js';
import { createPolicyEngine } from '../../libs/policy/index.js';
import { createExecutor } from '../../services/executor/create-executor.js';
import type { Executor } from '../../services/executor/executor.js';
import type { CallRunner } from '../../services/executor/executor-deps.js';
import type { Logger } from '../../libs/ports/logger.js';
import { createLogger } from '../../libs/observability/logger.js';
import { benchRegistry } from './bench-tools.js';
import { cpuMeter, nowMs, within } from './report.js';

export const ISSUER = 'toolgate-bench-agents';
export const AUDIENCE = 'toolgate-bench-executors';
export const KID = 'bench-key-1';
export const TENANT = 't1';
export const PRINCIPAL: Principal = {
  id: 'bench-agent',
  tenant: TENANT,
  kind: 'agent',
  scopes: [],
  roles: [],
};

/** Partition counts as the executor's configuration defaults them. */
export const PARTITIONS = { calls: 12, results: 12, audit: 6, dlq: 3 } as const;

/** A principal-signing key pair: the private half for publishers, the JWKS for executors. */
export interface BenchKeys {
  readonly privateKey: KeyObject;
  readonly jwks: { keys: JWK[] };
  /** A signed assertion for {@link PRINCIPAL}, valid for `ttlSeconds`. */
  assertion(ttlSeconds: number): Promise<string>;
}

export function createBenchKeys(): BenchKeys {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey,
    jwks: { keys: [{ ...(publicKey.export({ format: 'jwk' }) as JWK), kid: KID, use: 'sig' }] },
    assertion: (ttlSeconds) =>
      signPrincipal(PRINCIPAL, privateKey, { issuer: ISSUER, audience: AUDIENCE, ttlSeconds, kid: KID }),
  };
}

/** A unique name for one run's topics, groups and keys. */
export function runName(what: string): string {
  return `bench-${what}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

export interface ConnectionSettings {
  readonly brokers: readonly string[];
  readonly registryUrl: string;
}

/** A bus with the executor's production defaults (kafkajs logs errors only). */
export function createBus(conn: ConnectionSettings, clientId: string): KafkaEventBus {
  return new KafkaEventBus({ brokers: conn.brokers, clientId, logLevel: 'error' });
}

/** One run's topics, created on the broker, with a codec whose schemas are registered for them. */
export interface BenchTopics {
  readonly prefix: string;
  readonly topics: TopicNames;
  readonly partitions: Readonly<Record<keyof TopicNames, number>>;
  readonly bus: KafkaEventBus;
  readonly codec: RegistryEventCodec;
  /** Deletes the topics and closes the bus. */
  close(): Promise<void>;
}

export async function createBenchTopics(
  conn: ConnectionSettings,
  prefix: string,
  partitions: Readonly<Record<keyof TopicNames, number>> = PARTITIONS,
): Promise<BenchTopics> {
  const topics = topicNames(prefix);
  const bus = createBus(conn, `${prefix}-setup`);
  const specs = (Object.keys(topics) as (keyof TopicNames)[]).map((kind) => ({
    topic: topics[kind],
    partitions: partitions[kind],
    replicationFactor: 1,
  }));
  // A freshly created topic briefly reports unknown partitions (as the executor's start-up knows);
  // ensureTopics is idempotent, so it is simply asked again.
  for (let attempt = 1; ; attempt++) {
    try {
      await bus.ensureTopics(specs);
      break;
    } catch (err) {
      if (attempt >= 8) throw err;
      await sleep(250 * attempt);
    }
  }
  const codec = await RegistryEventCodec.create({ url: conn.registryUrl, topics });
  return {
    prefix,
    topics,
    partitions,
    bus,
    codec,
    async close() {
      await bus.close();
      await deleteTopics(conn, Object.values(topics));
    },
  };
}

/** Deletes topics (best effort: a benchmark's clean-up never hides its figures). */
export async function deleteTopics(conn: ConnectionSettings, topics: readonly string[]): Promise<void> {
  const { Kafka, logLevel } = await import('kafkajs');
  const admin = new Kafka({
    clientId: 'bench-cleanup',
    brokers: [...conn.brokers],
    logLevel: logLevel.NOTHING,
  }).admin();
  try {
    await admin.connect();
    await admin.deleteTopics({ topics: [...topics], timeout: 15_000 });
  } catch {
    // Topics that cannot be deleted now carry unique names and never collide with later runs.
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Options of {@link buildCallMessages}. */
export interface CallBatchOptions {
  readonly runId: string;
  readonly tool: string;
  readonly firstIndex: number;
  readonly count: number;
  /** Distinct resource keys (the calls-topic partition key) the calls cycle through. */
  readonly keyCount: number;
  readonly assertion: string;
  readonly topics: TopicNames;
  /** Results are addressed round-robin to this many reply partitions. */
  readonly replyPartitions: number;
  /** Calls per task (index within the task runs 0..callsPerTask-1). */
  readonly callsPerTask?: number;
}

/**
 * Encoded tool-call events as the SDK publishes them: distinct idempotency keys (task, step, index,
 * tool, arguments), the call's resource key as message key, a signed principal, a traceparent.
 */
export async function buildCallMessages(
  codec: RegistryEventCodec,
  o: CallBatchOptions,
): Promise<OutgoingMessage[]> {
  const perTask = o.callsPerTask ?? 50;
  const out: OutgoingMessage[] = [];
  for (let i = o.firstIndex; i < o.firstIndex + o.count; i++) {
    const args = { n: i };
    const taskId = `${o.runId}-task-${Math.floor(i / perTask)}`;
    const index = i % perTask;
    const traceId = randomUUID().replaceAll('-', '');
    const event: ToolCallRequestedEvent = {
      callId: `${o.runId}-call-${i}`,
      providerCallId: `call_${i}`,
      tool: o.tool,
      toolVersion: null,
      argumentsJson: JSON.stringify(args),
      tenant: TENANT,
      taskId,
      step: 0,
      index,
      idempotencyKey: idempotencyKey({ tenant: TENANT, taskId, step: 0, index }, o.tool, args),
      resourceKey: `${TENANT}:bench:k${i % o.keyCount}`,
      principalAssertion: o.assertion,
      traceId,
      replyTopic: o.topics.results,
      replyPartition: i % o.replyPartitions,
      deadlineMs: null,
      requestedAtMs: Date.now(),
    };
    out.push({
      key: event.resourceKey,
      value: await codec.encode('calls', event),
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
  }
  return out;
}

/** Publishes in chunks (one produce request each), in order. */
export async function publishChunked(
  publisher: EventPublisher,
  topic: string,
  messages: readonly OutgoingMessage[],
  chunk = 500,
): Promise<void> {
  for (let i = 0; i < messages.length; i += chunk) {
    await publisher.publish(topic, messages.slice(i, i + chunk));
  }
}

/** What a run's backlog holds: `count` calls of `tool` cycling through `keyCount` resource keys. */
export interface BacklogCalls {
  readonly tool: string;
  readonly count: number;
  readonly keyCount: number;
}

/**
 * Publishes `o.count` calls of `o.tool` on `setup`'s calls topic (assertions valid for an hour,
 * results addressed round-robin to every results partition), in chunks.
 */
export async function publishBacklog(setup: BenchTopics, keys: BenchKeys, o: BacklogCalls): Promise<void> {
  const messages = await buildCallMessages(setup.codec, {
    runId: setup.prefix,
    tool: o.tool,
    firstIndex: 0,
    count: o.count,
    keyCount: o.keyCount,
    assertion: await keys.assertion(3_600),
    topics: setup.topics,
    replyPartitions: setup.partitions.results,
  });
  await publishChunked(setup.bus, setup.topics.calls, messages);
}

/**
 * Fresh topics for a run named after `o.what` (see {@link runName}; partitions default
 * {@link PARTITIONS}) holding its backlog ({@link publishBacklog}).
 */
export async function createBacklog(
  conn: ConnectionSettings,
  keys: BenchKeys,
  o: BacklogCalls & {
    readonly what: string;
    readonly partitions?: Readonly<Record<keyof TopicNames, number>>;
  },
): Promise<BenchTopics> {
  const setup = await createBenchTopics(conn, runName(o.what), o.partitions);
  await publishBacklog(setup, keys, o);
  return setup;
}

/** What the counting wrappers saw. */
export interface ExecutorCounts {
  /** Results acknowledged by the broker. */
  results: number;
  /** When the first batch reached the executor (epoch ms), NaN before. */
  firstBatchAtMs: number;
  /** When the latest result was acknowledged (epoch ms). */
  lastResultAtMs: number;
  /** Pipeline outcomes by name (SUCCESS, DUPLICATE, …). */
  readonly outcomes: Map<string, number>;
  /** Errors the executor logged. */
  errors: number;
}

export interface BenchExecutorOptions {
  readonly conn: ConnectionSettings;
  readonly topics: TopicNames;
  readonly resultsPartitions: number;
  readonly jwks: { keys: JWK[] };
  readonly redisUrl: string;
  readonly redisPrefix: string;
  readonly groupId: string;
  readonly ownerId: string;
  /**
   * The executor's bound is per instance; the benchmarks name it as calls per partition ×
   * partitions, the figures earlier runs were made with (16 × 4 = 64 running calls).
   */
  readonly maxConcurrency: number;
  readonly partitionsConcurrently: number;
  /** How long results stay in Redis (default 10 minutes: long enough for any redelivery here). */
  readonly resultTtlMs?: number;
  /** Called with each pipeline run's duration, ms. */
  readonly onPipelineRun?: (durationMs: number) => void;
  /**
   * Outputs of concurrent calls share one produce request per topic (libs/bus coalescingPublisher),
   * as services/executor wires it (default true); false sends each publish as its own request, as
   * the executor did before.
   */
  readonly coalescePublishes?: boolean;
  /**
   * ioredis auto-pipelining, as the services connect (SERVICE_REDIS_OPTIONS, default true); false
   * sends each command in its own socket write, as the executor did before.
   */
  readonly redisAutoPipelining?: boolean;
}

/** An executor on its own bus and Redis connection, with counters. */
export interface BenchExecutor {
  readonly executor: Executor;
  readonly counts: ExecutorCounts;
  /** Resolves when `n` results have been acknowledged in total. */
  untilResults(n: number): Promise<void>;
  /** The partitions this member owns now. */
  assignment(): readonly number[];
  /** Stops the executor, closes its bus and Redis, deletes its Redis keys. */
  close(): Promise<void>;
}

export async function createBenchExecutor(o: BenchExecutorOptions): Promise<BenchExecutor> {
  const bus = createBus(o.conn, o.ownerId);
  const codec = await RegistryEventCodec.create({ url: o.conn.registryUrl, topics: o.topics });
  const redis = new Redis(o.redisUrl, {
    ...SERVICE_REDIS_OPTIONS,
    enableAutoPipelining: o.redisAutoPipelining !== false,
  });

  const counts: ExecutorCounts = {
    results: 0,
    firstBatchAtMs: Number.NaN,
    lastResultAtMs: Number.NaN,
    outcomes: new Map(),
    errors: 0,
  };
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  // Counts what the broker acknowledged; the executor's coalescing (unless switched off) sits in front.
  const publisher: EventPublisher = {
    async publish(topic, messages) {
      await bus.publish(topic, messages);
      if (topic !== o.topics.results) return;
      counts.results += messages.length;
      counts.lastResultAtMs = nowMs();
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (counts.results >= waiters[i]!.n) waiters.splice(i, 1)[0]!.resolve();
      }
    },
  };
  let subscription: { assignment(): readonly { partition: number }[] } | undefined;
  const subscriber: KeyedSubscriber = {
    async subscribeKeyed(options, handler) {
      const sub = await bus.subscribeKeyed(options, (message, context) => {
        if (Number.isNaN(counts.firstBatchAtMs)) counts.firstBatchAtMs = nowMs();
        return handler(message, context);
      });
      subscription = sub;
      return sub;
    },
  };
  const countingRuns = (pipeline: CallRunner): CallRunner => ({
    async run(call, ctx, opts) {
      const started = nowMs();
      const run = await pipeline.run(call, ctx, opts);
      o.onPipelineRun?.(nowMs() - started);
      const outcome = run.result.outcome;
      counts.outcomes.set(outcome, (counts.outcomes.get(outcome) ?? 0) + 1);
      return run;
    },
  });
  // The logger the executor process runs with (createLogger, level info), writing to a sink that
  // counts error lines: what a production executor pays per call for logging is measured too.
  const logger: Logger = createLogger({
    level: 'info',
    name: 'bench-executor',
    destination: {
      write(line: string) {
        if (((JSON.parse(line) as { level?: number }).level ?? 0) >= 50) counts.errors += 1;
      },
    },
  });
  const executor = createExecutor({
    catalog: {
      registry: benchRegistry(),
      policy: createPolicyEngine({ version: 'bench' }, []),
      downstreamLimits: {},
    },
    bus: {
      publish: (topic, messages) => publisher.publish(topic, messages),
      subscribeKeyed: (options, handler) => subscriber.subscribeKeyed(options, handler),
    },
    codec,
    topics: o.topics,
    replyTopics: { [o.topics.results]: o.resultsPartitions },
    idempotency: new RedisIdempotencyStore(redis, { keyPrefix: o.redisPrefix }),
    rateLimiter: new RedisRateLimiter(redis, { keyPrefix: o.redisPrefix }),
    verifier: createPrincipalVerifier({ keys: o.jwks, issuer: ISSUER, audience: AUDIENCE }),
    ownerId: o.ownerId,
    groupId: o.groupId,
    settings: {
      maxConcurrency: o.maxConcurrency * o.partitionsConcurrently,
      resultTtlMs: o.resultTtlMs ?? 600_000,
      shutdownTimeoutMs: 10_000,
      coalesceOutputs: o.coalescePublishes !== false,
    },
    clock: systemClock,
    logger,
    fromBeginning: true,
    aroundRuns: countingRuns,
  });
  let closed: Promise<void> | undefined;
  return {
    executor,
    counts,
    untilResults(n) {
      if (counts.results >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    assignment: () => (subscription?.assignment() ?? []).map((tp) => tp.partition),
    close() {
      closed ??= (async () => {
        await executor.stop();
        await bus.close();
        await deleteRedisKeys(redis, o.redisPrefix);
        await redis.quit();
      })();
      return closed;
    },
  };
}

/** Deletes every key under `prefix` (SCAN + UNLINK, so a large run does not block Redis). */
export async function deleteRedisKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** Outcome counts as "SUCCESS 1000, DUPLICATE 2". */
export function outcomeSummary(outcomes: ReadonlyMap<string, number>): string {
  return [...outcomes.entries()].map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
}

/** Options of {@link drainBacklog}: the executor's bounds and variants, and what the run expects. */
export interface DrainOptions extends Pick<
  BenchExecutorOptions,
  'maxConcurrency' | 'partitionsConcurrently' | 'coalescePublishes' | 'redisAutoPipelining'
> {
  /** The calls on the backlog, all of which must succeed. */
  readonly calls: number;
  readonly timeoutMs: number;
  /** Also fail when the executor logged an error (default: only a call that did not succeed fails). */
  readonly failOnLoggedErrors?: boolean;
  /**
   * Told this process's CPU time (user + system, all threads) per call, in microseconds, from the
   * executor joining its group to its last result acknowledged. The executor runs in this process
   * and is CPU-bound here, so this is its cost per call, steadier than calls/s on a shared machine.
   */
  readonly onCpuMicrosPerCall?: (micros: number) => void;
}

/**
 * Runs an in-process bench executor (group `<prefix>-executors`, Redis prefix `<prefix>:`) on
 * `setup`'s backlog until it has published `o.calls` results, and returns the calls/s from the first
 * batch it received to the last result acknowledged. Rejects when that takes longer than
 * `o.timeoutMs` or a call did not succeed. Closes the executor and `setup` either way.
 */
export async function drainBacklog(
  conn: ConnectionSettings & { readonly redisUrl: string },
  keys: BenchKeys,
  setup: BenchTopics,
  o: DrainOptions,
): Promise<number> {
  const ex = await createBenchExecutor({
    conn,
    topics: setup.topics,
    resultsPartitions: setup.partitions.results,
    jwks: keys.jwks,
    redisUrl: conn.redisUrl,
    redisPrefix: `${setup.prefix}:`,
    groupId: `${setup.prefix}-executors`,
    ownerId: `${setup.prefix}-executor`,
    maxConcurrency: o.maxConcurrency,
    partitionsConcurrently: o.partitionsConcurrently,
    coalescePublishes: o.coalescePublishes,
    redisAutoPipelining: o.redisAutoPipelining,
  });
  try {
    await ex.executor.start();
    const cpuSince = cpuMeter();
    await within(
      ex.untilResults(o.calls),
      o.timeoutMs,
      () => `the executor published ${ex.counts.results} results`,
    );
    o.onCpuMicrosPerCall?.(cpuSince(o.calls));
    const success = ex.counts.outcomes.get('SUCCESS') ?? 0;
    if (success !== o.calls || (o.failOnLoggedErrors === true && ex.counts.errors > 0)) {
      throw new Error(
        `expected ${o.calls} SUCCESS, got ${outcomeSummary(ex.counts.outcomes)}; ${ex.counts.errors} errors logged`,
      );
    }
    return o.calls / ((ex.counts.lastResultAtMs - ex.counts.firstBatchAtMs) / 1000);
  } finally {
    await ex.close();
    await setup.close();
  }
}
