import type { KeyObject } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Logger } from 'pino';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { PostgresCaseStore } from '../../../libs/adapters/postgres/case-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import {
  RedisIdempotencyStore,
  RedisRateLimiter,
  RedisFactStore,
} from '../../../libs/adapters/redis/index.js';
import { createPrincipalVerifier } from '../../../libs/auth/principal-verifier.js';
import { KafkaEventBus } from '../../../libs/bus/kafka/kafka-event-bus.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import { createAuditSink } from '../../../services/audit-sink/audit-sink.js';
import { buildStoreCatalog } from '../../../services/catalog/store-catalog.js';
import type { DemoToolgate } from '../../../services/demo/demo-toolgate.js';
import { createPostgresDownstreams } from '../../../services/downstreams/postgres/postgres-downstreams.js';
import { createExecutor } from '../../../services/executor/create-executor.js';
import { createReconciler } from '../../../services/reconciler/reconciler.js';
import { createToolgateClient } from '../../../services/sdk/index.js';
import { kafkaBrokers, schemaRegistryUrl } from '../../helpers/env.js';

/** What the secrets stack is built from: the credentials under test and the logger capturing everything. */
export interface SecretsStackOptions {
  /** Unique per run: topic prefix, Postgres schema and Redis key prefix. */
  readonly runId: string;
  /** A connection string carrying a password (Postgres here trusts loopback, so any password works). */
  readonly databaseUrl: string;
  readonly redisUrl: string;
  /** The agent backend's principal-signing key (Ed25519) and its public half for the executors. */
  readonly signingKey: KeyObject;
  readonly verifyKey: KeyObject;
  /** Every component logs here, at every level. */
  readonly logger: Logger;
}

/** A running stack the refund story can drive, plus what the scan reads afterwards. */
export interface SecretsStack extends DemoToolgate {
  readonly topics: TopicNames;
  readonly pool: pg.Pool;
  readonly redis: Redis;
  readonly keyPrefix: string;
}

const ISSUER = 'secrets-agent-backend';
const AUDIENCE = 'secrets-executor';
const KID = 'secrets-key-1';

/**
 * The story's toolgate on Kafka, the schema registry, Redis and Postgres (as services/demo's kafka
 * mode wires it), with the principal-signing key chosen by the caller so the scan knows what to look
 * for: two executors, the audit sink into Postgres, the reconciler over Postgres cases, and the SDK
 * client, all logging through one pino logger.
 */
export async function startSecretsStack(o: SecretsStackOptions): Promise<SecretsStack> {
  const clock = systemClock;
  const admin = new pg.Client({ connectionString: o.databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${o.runId}"`).finally(() => admin.end());
  const pool = new pg.Pool({
    connectionString: o.databaseUrl,
    max: 10,
    options: `-c search_path="${o.runId}"`,
  });
  const closers: Array<() => Promise<unknown>> = [() => pool.end()];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  };
  try {
    await migrate(pool);
    const downstreams = await createPostgresDownstreams(pool, { clock });
    const catalog = buildStoreCatalog(downstreams, clock);
    const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 2 });
    closers.push(() => redis.quit());
    const keyPrefix = `${o.runId}:`;
    const bus = new KafkaEventBus({
      brokers: kafkaBrokers(),
      clientId: o.runId,
      logger: o.logger.child({ component: 'bus' }),
      // kafkajs' info lines (connects, group joins) make sure the bus's own log output is scanned too.
      logLevel: 'info',
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 500,
      maxWaitTimeMs: 100,
    });
    closers.push(() => bus.close());
    const topics = topicNames(o.runId);
    const partitions = { calls: 4, results: 2, audit: 2, dlq: 1 };
    await bus.ensureTopics(
      Object.entries(partitions).map(([k, n]) => ({ topic: topics[k as keyof TopicNames], partitions: n })),
    );
    const codec = await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics });
    const auditStore = new PostgresAuditStore(pool);
    const idempotency = new RedisIdempotencyStore(redis, { keyPrefix });
    const rateLimiter = new RedisRateLimiter(redis, { keyPrefix });
    const replyTopics = { [topics.results]: partitions.results };
    const verifier = createPrincipalVerifier({
      keys: { [KID]: o.verifyKey },
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    const parts: { start(): Promise<void>; stop(): Promise<void> }[] = [];
    for (const i of [1, 2]) {
      const owner = `${o.runId}-executor-${i}`;
      parts.push(
        createExecutor({
          catalog,
          bus,
          codec,
          topics,
          replyTopics,
          idempotency,
          rateLimiter,
          facts: new RedisFactStore(redis, { keyPrefix }),
          verifier,
          ownerId: owner,
          groupId: `${o.runId}-executors`,
          settings: {
            maxConcurrency: 32,
            breaker: { errorPercent: 50, volume: 10, resetMs: 30_000 },
            resultTtlMs: 3_600_000,
            leaseMarginMs: 5_000,
            shutdownTimeoutMs: 10_000,
          },
          clock,
          logger: o.logger.child({ component: 'executor', owner }),
        }),
      );
    }
    parts.push(
      createAuditSink({
        subscriber: bus,
        publisher: bus,
        codec,
        topics,
        store: auditStore,
        logger: o.logger.child({ component: 'audit-sink' }),
        groupId: `${o.runId}-audit-sink`,
        clock,
      }),
      createReconciler({
        subscriber: bus,
        publisher: bus,
        codec,
        topics,
        cases: new PostgresCaseStore(pool, clock),
        idempotency,
        tools: catalog.registry,
        clock,
        logger: o.logger.child({ component: 'reconciler' }),
        reconcilerId: `${o.runId}-reconciler`,
        groupId: `${o.runId}-reconcilers`,
        replyTopics,
        resultTtlMs: 3_600_000,
        checkScheduleMs: [200, 400],
        pollIntervalMs: 100,
      }),
    );
    const client = createToolgateClient({
      publisher: bus,
      subscriber: bus,
      codec,
      topics,
      instanceId: `${o.runId}-agent`,
      replySlot: 0,
      signing: { key: o.signingKey, issuer: ISSUER, audience: AUDIENCE, kid: KID },
      tools: catalog.registry,
      clock,
      logger: o.logger.child({ component: 'sdk' }),
      defaultTimeoutMs: 20_000,
    });
    parts.push({ start: () => client.start(), stop: () => client.stop() });
    closers.push(async () => {
      for (const part of [...parts].reverse()) await part.stop();
    });
    await Promise.all(parts.map((p) => p.start()));
    return {
      mode: 'kafka',
      client,
      downstreams,
      auditStore,
      topics,
      pool,
      redis,
      keyPrefix,
      async awaitAudited(callIds, timeoutMs = 60_000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const found = await Promise.all(
            callIds.map(async (callId) => (await auditStore.query({ callId, limit: 1 })).length),
          );
          if (found.every((n) => n > 0)) return;
          if (Date.now() > deadline) throw new Error(`calls not audited within ${timeoutMs} ms`);
          await new Promise((r) => setTimeout(r, 50));
        }
      },
      stop: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
