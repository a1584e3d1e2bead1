import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { EachMessagePayload } from 'kafkajs';
import type { JSONWebKeySet, JWK } from 'jose';
import { RedisIdempotencyStore, RedisRateLimiter } from '../../../libs/adapters/redis/index.js';
import { createPrincipalVerifier } from '../../../libs/auth/principal-verifier.js';
import { KafkaEventBus, type KafkaEventBusOptions } from '../../../libs/bus/kafka/kafka-event-bus.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { EventKind, EventKinds } from '../../../libs/events/contracts.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import { createCircuitBreakers, type ManagedCircuitBreakers } from '../../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../../libs/execution/outbound-limiter.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import type { EventCodec } from '../../../libs/events/event-codec.js';
import { silentLogger, type Logger } from '../../../libs/ports/logger.js';
import type { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { createCallConsumer, type Executor } from '../../../services/executor/executor.js';
import { allTopics } from '../../../libs/runtime/clients.js';
import type { PartitionCounts } from '../../../libs/runtime/env.js';
import type { CallRunner, ExecutorDeps } from '../../../services/executor/executor-deps.js';
import { DATABASE_URL, schemaRegistryUrl } from '../../helpers/env.js';
import { createTestKafka, type ConsumedMessage, type TestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestRedis, type TestRedis } from '../../helpers/redis.js';
import { STAGES } from '../../../libs/guards/stages.js';

/**
 * The parts in-process tests on real servers build an executor from (the executor's and the SDK's
 * stacks share them): a bus with short timeouts, breakers that never open on their own, a guard
 * pipeline on Redis, the executor itself, and the clean-up of what they leave on the servers.
 */

/**
 * A Kafka bus on the test brokers (the shared ones, or a private broker a scenario controls),
 * tuned so rebalances and stops take well under a second.
 */
export function testKafkaBus(
  kafka: Pick<TestKafka, 'brokers'>,
  name: string,
  options: Pick<KafkaEventBusOptions, 'logger' | 'logLevel'> = {},
): KafkaEventBus {
  return new KafkaEventBus({
    brokers: kafka.brokers,
    clientId: uniqueName(name),
    logLevel: options.logLevel ?? 'error',
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    sessionTimeoutMs: 6_000,
    rebalanceTimeoutMs: 15_000,
    heartbeatIntervalMs: 300,
    maxWaitTimeMs: 100,
    commitIntervalMs: 50,
    redeliveryDelayMs: 20,
  });
}

/** Creates the four topics with the test's partition counts, one replica each (one local broker). */
export async function ensureTestTopics(
  bus: KafkaEventBus,
  topics: TopicNames,
  partitions: PartitionCounts,
): Promise<void> {
  await bus.ensureTopics(allTopics(topics, partitions).map((spec) => ({ ...spec, replicationFactor: 1 })));
}

/** Breakers with a volume threshold no test reaches: they stay closed unless a test opens them. */
export function testBreakers(): ManagedCircuitBreakers {
  return createCircuitBreakers(
    { errorThresholdPercentage: 50, volumeThreshold: 1_000, resetTimeoutMs: 30_000, timeoutMs: false },
    systemClock,
  );
}

/** A guard pipeline over `registry` with Redis idempotency and rate limits and no policy rules. */
export function redisTestPipeline(options: {
  readonly registry: ToolRegistry;
  readonly redis: TestRedis;
  readonly breakers: ManagedCircuitBreakers;
  readonly owner: string;
  readonly policyName: string;
}): GuardPipeline {
  const { redis } = options;
  const rateLimiter = new RedisRateLimiter(redis.redis, { keyPrefix: redis.prefix });
  return new GuardPipeline(
    {
      tools: options.registry,
      idempotency: new RedisIdempotencyStore(redis.redis, {
        keyPrefix: redis.prefix,
        abandonedRetentionMs: 600_000,
      }),
      rateLimiter,
      policy: createPolicyEngine([], options.policyName),
      breakers: options.breakers,
      outbound: createOutboundLimiter(rateLimiter, {}, systemClock),
      clock: systemClock,
      owner: options.owner,
      settings: { resultTtlMs: 600_000, leaseMarginMs: 1_000 },
    },
    STAGES,
  );
}

/** Deletes the test's topics (best effort) and closes the Kafka client. */
export async function dropTestTopics(kafka: TestKafka, topics: TopicNames): Promise<void> {
  const admin = await kafka.admin();
  await admin.deleteTopics({ topics: Object.values(topics), timeout: 10_000 }).catch(() => undefined);
  await kafka.close();
}

/** Deletes the test's Redis keys and closes the client. */
export async function dropTestRedis(redis: TestRedis): Promise<void> {
  const keys = await redis.redis.keys(`${redis.prefix}*`);
  if (keys.length > 0) await redis.redis.del(...keys);
  await redis.close();
}

/** Deletes the test's topics and Redis keys and closes both clients. */
export async function dropKafkaAndRedis(
  kafka: TestKafka,
  topics: TopicNames,
  redis: TestRedis,
): Promise<void> {
  await dropTestTopics(kafka, topics);
  await dropTestRedis(redis);
}

/**
 * The environment every service reads (libs/runtime/env.ts), pointed at a test's servers: its
 * topic prefix and partition counts, its Postgres schema (as the connection's search_path), short
 * Kafka timeouts, and HTTP_PORT 0 so several services can run on one machine.
 */
export function testServiceEnv(options: {
  readonly brokers: readonly string[];
  readonly prefix: string;
  readonly schema: string;
  readonly partitions: {
    readonly calls: number;
    readonly results: number;
    readonly audit: number;
    readonly dlq: number;
  };
}): Record<string, string> {
  const sep = DATABASE_URL.includes('?') ? '&' : '?';
  return {
    KAFKA_BROKERS: options.brokers.join(','),
    SCHEMA_REGISTRY_URL: schemaRegistryUrl(),
    DATABASE_URL: `${DATABASE_URL}${sep}options=${encodeURIComponent(`-c search_path=${options.schema}`)}`,
    TOOLGATE_TOPIC_PREFIX: options.prefix,
    CALLS_PARTITIONS: String(options.partitions.calls),
    RESULTS_PARTITIONS: String(options.partitions.results),
    AUDIT_PARTITIONS: String(options.partitions.audit),
    DLQ_PARTITIONS: String(options.partitions.dlq),
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    KAFKA_REBALANCE_TIMEOUT_MS: '15000',
    KAFKA_HEARTBEAT_MS: '500',
    HTTP_PORT: '0',
  };
}

/** What {@link testExecutor} needs of a stack. */
export interface TestExecutorParts {
  readonly bus: KafkaEventBus;
  readonly codec: EventCodec;
  readonly topics: TopicNames;
  readonly resultsPartitions: number;
  readonly pipeline: CallRunner;
  readonly registry: ToolRegistry;
  readonly jwks: JSONWebKeySet;
  readonly issuer: string;
  readonly audience: string;
  readonly ownerId: string;
  readonly groupId: string;
  readonly logger: Logger;
}

/** An in-process executor on a test stack: 24 calls at once, quick publish retries. */
export function testExecutor(parts: TestExecutorParts, overrides: Partial<ExecutorDeps> = {}): Executor {
  return createCallConsumer({
    publisher: parts.bus,
    subscriber: parts.bus,
    codec: parts.codec,
    topics: parts.topics,
    replyTopics: { [parts.topics.results]: parts.resultsPartitions },
    pipeline: parts.pipeline,
    tools: parts.registry,
    verifier: createPrincipalVerifier({ keys: parts.jwks, issuer: parts.issuer, audience: parts.audience }),
    clock: systemClock,
    logger: parts.logger,
    ownerId: parts.ownerId,
    groupId: parts.groupId,
    maxConcurrency: 24,
    backoff: { baseDelayMs: 20, maxDelayMs: 200 },
    ...overrides,
  });
}

/** One decoded message a test read back, with its Kafka coordinates and headers. */
export interface Read<K extends EventKind> {
  readonly event: EventKinds[K];
  readonly partition: number;
  readonly offset: string;
  readonly headers: Record<string, string>;
}

/** Decodes one consumed message, with its partition, offset and headers (last value of each). */
export async function decodeRead<K extends EventKind>(
  codec: EventCodec,
  kind: K,
  m: ConsumedMessage,
): Promise<Read<K>> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.headers ?? {})) {
    const value = Array.isArray(v) ? v[v.length - 1] : v;
    if (value !== undefined) headers[k] = value.toString();
  }
  return { event: await codec.decode(kind, m.value!), partition: m.partition, offset: m.offset, headers };
}

/** Decodes what a kafkajs `eachMessage` handler receives, like {@link decodeRead}. */
export function decodeEachMessage<K extends EventKind>(
  codec: EventCodec,
  kind: K,
  { topic, partition, message }: EachMessagePayload,
): Promise<Read<K>> {
  const { offset, key, value, headers } = message;
  return decodeRead(codec, kind, { topic, partition, offset, key, value, headers });
}

/** What {@link startFixtureExecutor} stands up; `close` stops the executor and drops topics and keys. */
export interface FixtureExecutor {
  readonly kafka: TestKafka;
  readonly topics: TopicNames;
  readonly bus: KafkaEventBus;
  readonly codec: RegistryEventCodec;
  readonly redis: TestRedis;
  /** The key the principal assertions are signed with; `jwks` holds its public half (kid `kid`). */
  readonly privateKey: KeyObject;
  readonly jwks: JSONWebKeySet;
  readonly executor: Executor;
  close(): Promise<void>;
}

/**
 * Real Kafka topics under a fresh prefix (the given partition counts), the registry codec, Redis,
 * an Ed25519 signing key and an in-process executor running `registry`'s tools, started: what the
 * SDK and MCP gateway stacks stand on.
 */
export async function startFixtureExecutor(
  name: string,
  options: {
    readonly registry: ToolRegistry;
    readonly partitions: PartitionCounts;
    readonly issuer: string;
    readonly audience: string;
    readonly kid: string;
    readonly policyName: string;
  },
): Promise<FixtureExecutor> {
  const kafka = createTestKafka(name);
  const topics = topicNames(uniqueName(name));
  const bus = testKafkaBus(kafka, name);
  await ensureTestTopics(bus, topics, options.partitions);
  const codec = await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics });
  const redis = createTestRedis(name);
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwks = { keys: [{ ...(publicKey.export({ format: 'jwk' }) as JWK), kid: options.kid, use: 'sig' }] };
  const breakers = testBreakers();
  const pipeline = redisTestPipeline({
    registry: options.registry,
    redis,
    breakers,
    owner: `${name}-executor`,
    policyName: options.policyName,
  });
  const executor = testExecutor({
    bus,
    codec,
    topics,
    resultsPartitions: options.partitions.results,
    pipeline,
    registry: options.registry,
    jwks,
    issuer: options.issuer,
    audience: options.audience,
    ownerId: `${name}-executor`,
    groupId: uniqueName(`${name}_executors`),
    logger: silentLogger,
  });
  await executor.start();
  return {
    kafka,
    topics,
    bus,
    codec,
    redis,
    privateKey,
    jwks,
    executor,
    async close() {
      await executor.stop();
      breakers.shutdown();
      await bus.close();
      await dropKafkaAndRedis(kafka, topics, redis);
    },
  };
}
