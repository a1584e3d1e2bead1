import { generateKeyPairSync } from 'node:crypto';
import type { JWK } from 'jose';
import { RedisIdempotencyStore, RedisRateLimiter } from '../../../libs/adapters/redis/index.js';
import { createPrincipalVerifier } from '../../../libs/auth/principal-verifier.js';
import { KafkaEventBus } from '../../../libs/bus/kafka/kafka-event-bus.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { EventKind, EventKinds } from '../../../libs/events/contracts.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import { createCircuitBreakers } from '../../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../../libs/execution/outbound-limiter.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import type { BatchHandler, EventSubscriber, SubscribeOptions } from '../../../libs/ports/event-bus.js';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import { createExecutor, type Executor } from '../../../services/executor/executor.js';
import type { ToolgateClientOptions } from '../../../services/sdk/client-options.js';
import { createToolgateClient, type ToolgateClient } from '../../../services/sdk/toolgate-client.js';
import { schemaRegistryUrl } from '../../helpers/env.js';
import { consumeMessages, createTestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestRedis } from '../../helpers/redis.js';
import { Effects, fixtureTools, registryOf } from '../../unit/sdk/test-tools.js';

export const ISSUER = 'agent-backend-sdk-test';
export const AUDIENCE = 'toolgate-executor-sdk-test';
const KID = 'sdk-test-key';

/** Partition counts: the results topic has one partition per SDK instance slot. */
export const PARTITIONS = { calls: 4, results: 3, audit: 1, dlq: 1 } as const;

/** Every partition of the results topic an instance fetched messages from, one entry per message. */
export type FetchLog = Map<string, number[]>;

/**
 * Real Kafka, the schema registry and Redis, with the real executor in-process running the three
 * provider-fixture tools, and SDK clients on demand. Names are unique per stack.
 */
export interface SdkStack {
  readonly topics: TopicNames;
  readonly effects: Effects;
  /** Partitions each client instance (by instance id) fetched results from. */
  readonly fetched: FetchLog;
  client(overrides?: Partial<ToolgateClientOptions>): Promise<ToolgateClient>;
  /** Reads `count` messages of a topic from the beginning and decodes them. */
  read<K extends EventKind>(kind: K, count: number): Promise<EventKinds[K][]>;
  close(): Promise<void>;
}

export async function createSdkStack(name: string): Promise<SdkStack> {
  const kafka = createTestKafka(name);
  const topics = topicNames(uniqueName(name));
  const bus = new KafkaEventBus({
    brokers: kafka.brokers,
    clientId: uniqueName(name),
    logLevel: 'error',
    sessionTimeoutMs: 6_000,
    rebalanceTimeoutMs: 15_000,
    heartbeatIntervalMs: 300,
    maxWaitTimeMs: 100,
    commitIntervalMs: 50,
    redeliveryDelayMs: 20,
  });
  await bus.ensureTopics(
    (Object.keys(PARTITIONS) as EventKind[]).map((kind) => ({
      topic: topics[kind],
      partitions: PARTITIONS[kind],
      replicationFactor: 1,
    })),
  );
  const codec = await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics });
  const redis = createTestRedis(name);
  const effects = new Effects();
  const registry = registryOf(fixtureTools(effects));
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwks = { keys: [{ ...(publicKey.export({ format: 'jwk' }) as JWK), kid: KID, use: 'sig' }] };
  const breakers = createCircuitBreakers(
    { errorThresholdPercentage: 50, volumeThreshold: 1_000, resetTimeoutMs: 30_000, timeoutMs: false },
    systemClock,
  );
  const rateLimiter = new RedisRateLimiter(redis.redis, { keyPrefix: redis.prefix });
  const pipeline = new GuardPipeline({
    tools: registry,
    idempotency: new RedisIdempotencyStore(redis.redis, {
      keyPrefix: redis.prefix,
      abandonedRetentionMs: 600_000,
    }),
    rateLimiter,
    policy: createPolicyEngine([], 'sdk-test'),
    breakers,
    outbound: createOutboundLimiter(rateLimiter, {}, systemClock),
    clock: systemClock,
    owner: `${name}-executor`,
    settings: { resultTtlMs: 600_000, leaseMarginMs: 1_000 },
  });
  const ignore = (): void => undefined;
  const executor: Executor = createExecutor({
    publisher: bus,
    subscriber: bus,
    codec,
    topics,
    replyTopics: { [topics.results]: PARTITIONS.results },
    pipeline,
    tools: registry,
    verifier: createPrincipalVerifier({ keys: jwks, issuer: ISSUER, audience: AUDIENCE }),
    clock: systemClock,
    logger: { debug: ignore, info: ignore, warn: ignore, error: ignore },
    ownerId: `${name}-executor`,
    groupId: uniqueName(`${name}_executors`),
    maxConcurrency: 8,
    partitionsConcurrently: 4,
    backoff: { firstDelayMs: 20, maxDelayMs: 200 },
  });
  await executor.start();

  const fetched: FetchLog = new Map();
  // The bus itself, observed: records the partition of every results message handed to a client.
  const counting = (instanceId: string): EventSubscriber => ({
    subscribe: (options: SubscribeOptions, handler: BatchHandler) =>
      bus.subscribe(options, (batch, control) => {
        fetched.set(instanceId, [
          ...(fetched.get(instanceId) ?? []),
          ...batch.messages.map(() => batch.partition),
        ]);
        return handler(batch, control);
      }),
  });
  const clients: ToolgateClient[] = [];
  return {
    topics,
    effects,
    fetched,
    async client(overrides = {}) {
      const instanceId = overrides.instanceId ?? uniqueName('agent');
      const client = createToolgateClient({
        publisher: bus,
        subscriber: counting(instanceId),
        codec,
        topics,
        instanceId,
        replySlot: 0,
        tools: registry,
        signing: {
          key: privateKey,
          issuer: ISSUER,
          audience: AUDIENCE,
          kid: KID,
          ttlSeconds: 120,
        },
        defaultTimeoutMs: 30_000,
        ...overrides,
      });
      clients.push(client);
      await client.start();
      return client;
    },
    async read(kind, count) {
      const consumer = kafka.consumer({
        groupId: kafka.uniqueGroupId(`${name}_${kind}`),
        maxWaitTimeInMs: 100,
      });
      const got = await consumeMessages(consumer, topics[kind], count);
      return Promise.all(got.map((m) => codec.decode(kind, m.value!)));
    },
    async close() {
      await Promise.all(clients.map((c) => c.stop()));
      await executor.stop();
      breakers.shutdown();
      await bus.close();
      const admin = await kafka.admin();
      await admin.deleteTopics({ topics: Object.values(topics), timeout: 10_000 }).catch(() => undefined);
      await kafka.close();
      const keys = await redis.redis.keys(`${redis.prefix}*`);
      if (keys.length > 0) await redis.redis.del(...keys);
      await redis.close();
    },
  };
}
