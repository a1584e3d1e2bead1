import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { EachMessagePayload } from 'kafkajs';
import type { JSONWebKeySet, JWK } from 'jose';
import { RedisIdempotencyStore, RedisRateLimiter } from '../../../libs/adapters/redis/index.js';
import { createPrincipalVerifier } from '../../../libs/auth/principal-verifier.js';
import { KafkaEventBus, type KafkaEventBusOptions } from '../../../libs/bus/kafka/kafka-event-bus.js';
import type { Catalog } from '../../../libs/catalog/catalog.js';
import type { PolicyEngine } from '../../../libs/pipeline/deps.js';
import type { EventKind, EventKinds } from '../../../libs/events/contracts.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import type { EventCodec } from '../../../libs/events/event-codec.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import type { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import {
  createExecutor,
  type ExecutorOptions,
  type ExecutorSettings,
  type GuardedExecutor,
} from '../../../services/executor/create-executor.js';
import { allTopics } from '../../../libs/runtime/clients.js';
import type { PartitionCounts } from '../../../libs/runtime/env.js';
import { DATABASE_URL, schemaRegistryUrl } from '../../helpers/env.js';
import { createTestKafka, type ConsumedMessage, type TestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestRedis, type TestRedis } from '../../helpers/redis.js';

/**
 * The parts in-process tests on real servers build an executor from (the executor's and the SDK's
 * stacks share them): a bus with short timeouts, Redis stores, a catalog without rules, the
 * executor itself (through `createExecutor`, with breakers that never open on their own), and the
 * clean-up of what they leave on the servers.
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

/** A catalog of `registry`'s tools with no policy rules (version `policyName`) and no outbound limits. */
export function testCatalog(registry: ToolRegistry, policyName: string): Catalog {
  return { registry, policy: createPolicyEngine({ version: policyName }, []), downstreamLimits: {} };
}

function withPolicy(catalog: Catalog, wrap: ((base: PolicyEngine) => PolicyEngine) | undefined): Catalog {
  return wrap === undefined ? catalog : { ...catalog, policy: wrap(catalog.policy) };
}

/** Redis idempotency (abandoned claims remembered 10 min) and rate limits under the test's key prefix. */
export function redisTestStores(
  redis: TestRedis,
): Pick<ExecutorOptions, 'idempotency' | 'rateLimiter'> & { readonly idempotency: RedisIdempotencyStore } {
  return {
    idempotency: new RedisIdempotencyStore(redis.redis, {
      keyPrefix: redis.prefix,
      abandonedRetentionMs: 600_000,
    }),
    rateLimiter: new RedisRateLimiter(redis.redis, { keyPrefix: redis.prefix }),
  };
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

/**
 * The settings of an in-process test executor: 24 calls at once, results kept 10 min, a 1 s lease
 * margin, and breakers with a volume threshold no test reaches (closed unless a test opens them).
 */
export const TEST_EXECUTOR_SETTINGS: Partial<ExecutorSettings> = Object.freeze({
  maxConcurrency: 24,
  resultTtlMs: 600_000,
  leaseMarginMs: 1_000,
  breaker: Object.freeze({ errorPercent: 50, volume: 1_000, resetMs: 30_000 }),
});

/** What {@link testExecutor} takes: `createExecutor`'s options, with the verifier and reply topic as a stack knows them. */
export interface TestExecutorOptions extends Omit<ExecutorOptions, 'verifier' | 'replyTopics'> {
  /** Partitions of the results topic, the one reply topic. */
  readonly resultsPartitions: number;
  /** The principal keys (and their issuer and audience) the executor verifies with. */
  readonly jwks: JSONWebKeySet;
  readonly issuer: string;
  readonly audience: string;
}

/**
 * An in-process executor on a test stack, built by `createExecutor`: {@link TEST_EXECUTOR_SETTINGS}
 * (the given `settings` merged over them), publish retries 20 ms doubling to 200 ms unless
 * `backoff` says otherwise.
 */
export function testExecutor(options: TestExecutorOptions): GuardedExecutor {
  const { resultsPartitions, jwks, issuer, audience, ...rest } = options;
  return createExecutor({
    backoff: { baseDelayMs: 20, maxDelayMs: 200 },
    ...rest,
    replyTopics: { [rest.topics.results]: resultsPartitions },
    verifier: createPrincipalVerifier({ keys: jwks, issuer, audience }),
    settings: { ...TEST_EXECUTOR_SETTINGS, ...rest.settings },
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
  readonly executor: GuardedExecutor;
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
    /** Wraps the catalog's (empty) policy, e.g. with an upstream's pinned-schema rule. */
    readonly policy?: (base: PolicyEngine) => PolicyEngine;
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
  const executor = testExecutor({
    catalog: withPolicy(testCatalog(options.registry, options.policyName), options.policy),
    ...redisTestStores(redis),
    bus,
    codec,
    topics,
    resultsPartitions: options.partitions.results,
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
      await bus.close();
      await dropKafkaAndRedis(kafka, topics, redis);
    },
  };
}
