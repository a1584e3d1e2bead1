import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import type { KafkaEventBus } from '../../../libs/bus/kafka/kafka-event-bus.js';
import type { Principal } from '../../../libs/core/types.js';
import type { EventKind, ToolCallRequestedEvent } from '../../../libs/events/contracts.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import type { GuardedExecutor } from '../../../services/executor/create-executor.js';
import type { Logger } from '../../../libs/ports/logger.js';
import { REDIS_URL, schemaRegistryUrl } from '../../helpers/env.js';
import { consumeMessages, createTestKafka, type TestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { createTestRedis, type TestRedis } from '../../helpers/redis.js';
import { LEDGER_DDL, ledgerTools, TOOL_SCOPE } from './ledger-tools.js';
import {
  dropKafkaAndRedis,
  redisTestStores,
  testCatalog,
  testExecutor,
  ensureTestTopics,
  testKafkaBus,
  testServiceEnv,
  decodeRead,
  type Read,
  type TestExecutorOptions,
} from './test-parts.js';

export { decodeRead, type Read } from './test-parts.js';
import { publishRequests, signedRequest } from '../../unit/executor/call-requests.js';

export const ISSUER = 'agent-backend-test';
export const AUDIENCE = 'toolgate-executor-test';
export const TENANT = 't1';
export const KID = 'test-key-1';

export const PRINCIPAL: Principal = {
  id: 'agent-7',
  tenant: TENANT,
  kind: 'agent',
  scopes: [TOOL_SCOPE],
  roles: [],
};

/** Partition counts of the test topics. */
export const PARTITIONS = { calls: 6, results: 3, audit: 1, dlq: 1 } as const;
export const REPLY_PARTITION = 1;

/**
 * Everything an executor test needs on real servers, isolated by unique names: topics under a
 * fresh prefix (created through the bus port, deleted on close), schemas registered for them, a
 * Postgres schema with the ledger, a Redis key prefix, and an Ed25519 principal-signing key.
 */
export interface ExecutorStack {
  readonly topics: TopicNames;
  readonly prefix: string;
  readonly bus: KafkaEventBus;
  readonly codec: RegistryEventCodec;
  readonly kafka: TestKafka;
  readonly db: TestSchema;
  readonly redis: TestRedis;
  readonly signingKey: KeyObject;
  /** The verification key as a JWKS, as an executor's configuration holds it. */
  readonly jwks: { keys: JWK[] };
  /**
   * The environment of an executor service (main.ts, or `createExecutorService` with
   * `loadExecutorConfig`) on this stack: its topics, group, schema, Redis prefix and keys, short
   * Kafka timeouts, and HTTP_PORT 0 so several can run on one machine. No catalog module is named.
   */
  serviceEnv(executorId: string): Record<string, string>;
  /**
   * An in-process executor over this stack (`testExecutor`: the ledger tools, the stack's Redis
   * stores, owner `<prefix>-executor` in group `<prefix>-executors`); `overrides` replace any
   * option, e.g. another catalog and stores. Started by the caller, stopped on close.
   */
  executor(overrides?: Partial<TestExecutorOptions>): GuardedExecutor;
  request(
    args: Record<string, unknown>,
    overrides?: Partial<ToolCallRequestedEvent> & { principal?: Principal },
  ): Promise<ToolCallRequestedEvent>;
  /** Publishes requests in order, each keyed by its resource key, with a traceparent header. */
  publishCalls(requests: readonly ToolCallRequestedEvent[]): Promise<void>;
  publishRaw(key: string, value: Buffer): Promise<void>;
  /** Reads `count` messages of a topic from the beginning (fresh group) and decodes them. */
  read<K extends EventKind>(kind: K, count: number, timeoutMs?: number): Promise<Read<K>[]>;
  close(): Promise<void>;
}

export function quietLogger(errors: Array<{ obj: object; msg?: string }> = []): Logger {
  const ignore = (): void => undefined;
  return {
    debug: ignore,
    info: ignore,
    warn: ignore,
    error: (obj, msg) => errors.push({ obj, ...(msg === undefined ? {} : { msg }) }),
  };
}

export async function createExecutorStack(
  name: string,
  opts: { maxEventBytes?: number } = {},
): Promise<ExecutorStack> {
  const kafka = createTestKafka(name);
  const prefix = uniqueName(name);
  const topics = topicNames(prefix);
  const bus = testKafkaBus(kafka, name);
  await ensureTestTopics(bus, topics, PARTITIONS);
  const codec = await RegistryEventCodec.create({
    url: schemaRegistryUrl(),
    topics,
    ...(opts.maxEventBytes === undefined ? {} : { maxBytes: opts.maxEventBytes }),
  });
  // Reads use the default size limit: a dead letter carrying 64 KiB of poison is larger than a
  // deliberately small limit on the calls codec.
  const readCodec =
    opts.maxEventBytes === undefined
      ? codec
      : await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics });
  const db = await createTestSchema(name);
  await db.pool.query(LEDGER_DDL);
  const redis = createTestRedis(name);
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwks = { keys: [{ ...(publicKey.export({ format: 'jwk' }) as JWK), kid: KID, use: 'sig' }] };
  const registry = new ToolRegistry();
  for (const tool of ledgerTools(db.pool)) registry.register(tool);
  const catalog = testCatalog(registry, 'executor-test');
  const stores = redisTestStores(redis);
  const executors: GuardedExecutor[] = [];
  let seq = 0;

  return {
    topics,
    prefix,
    bus,
    codec,
    kafka,
    db,
    redis,
    signingKey: privateKey,
    jwks,
    serviceEnv(executorId) {
      return {
        ...testServiceEnv({ brokers: kafka.brokers, prefix, schema: db.schema, partitions: PARTITIONS }),
        REDIS_URL,
        TOOLGATE_GROUP_ID: `${prefix}-executors`,
        EXECUTOR_ID: executorId,
        MAX_CONCURRENCY: '24',
        PRINCIPAL_JWKS: JSON.stringify(jwks),
        PRINCIPAL_ISSUER: ISSUER,
        PRINCIPAL_AUDIENCE: AUDIENCE,
        REDIS_KEY_PREFIX: redis.prefix,
        LEASE_MARGIN_MS: '1000',
        SHUTDOWN_TIMEOUT_MS: '10000',
      };
    },
    executor(overrides = {}) {
      const executor = testExecutor({
        catalog,
        ...stores,
        bus,
        codec,
        topics,
        resultsPartitions: PARTITIONS.results,
        jwks,
        issuer: ISSUER,
        audience: AUDIENCE,
        ownerId: `${prefix}-executor`,
        groupId: `${prefix}-executors`,
        logger: quietLogger(),
        ...overrides,
      });
      executors.push(executor);
      return executor;
    },
    async request(args, overrides = {}) {
      seq += 1;
      const { principal = PRINCIPAL, ...fields } = overrides;
      return signedRequest(
        {
          callId: `${prefix}-call-${seq}`,
          providerCallId: `toolu_${seq}`,
          tool: 'ledger_append',
          toolVersion: null,
          argumentsJson: JSON.stringify(args),
          tenant: TENANT,
          taskId: `${prefix}-task`,
          step: 1,
          index: seq,
          resourceKey: `${TENANT}:ledger:${String(args.key)}`,
          traceId: randomTraceId(),
          replyTopic: topics.results,
          replyPartition: REPLY_PARTITION,
          deadlineMs: null,
          requestedAtMs: Date.now(),
        },
        principal,
        { key: privateKey, issuer: ISSUER, audience: AUDIENCE, kid: KID, ttlSeconds: 600 },
        fields,
      );
    },
    publishCalls: (requests) => publishRequests(bus, codec, topics.calls, requests),
    publishRaw: (key, value) => bus.publish(topics.calls, [{ key, value }]),
    async read(kind, count, timeoutMs = 30_000) {
      const consumer = kafka.consumer({
        groupId: kafka.uniqueGroupId(`${name}_${kind}`),
        maxWaitTimeInMs: 100,
      });
      const got = await consumeMessages(consumer, topics[kind], count, timeoutMs);
      return Promise.all(got.map(async (m) => decodeRead(readCodec, kind, m)));
    },
    async close() {
      await Promise.all(executors.map((e) => e.stop()));
      await bus.close();
      await dropKafkaAndRedis(kafka, topics, redis);
      await db.drop();
    },
  };
}

export function randomTraceId(): string {
  let id = '';
  while (id.length < 32) id += Math.floor(Math.random() * 16).toString(16);
  return id.replace(/^0/, 'a');
}
