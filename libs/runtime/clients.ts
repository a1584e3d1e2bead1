import { Kafka, logLevel } from 'kafkajs';
import type { Cluster, Redis } from 'ioredis';
import { connectRedis, SERVICE_REDIS_OPTIONS } from '../adapters/redis/connect.js';
import { RedisIdempotencyStore } from '../adapters/redis/redis-idempotency-store.js';
import pg from 'pg';
import { migrate, pendingMigrations } from '../adapters/postgres/migrate.js';
import { KafkaEventBus } from '../bus/kafka/kafka-event-bus.js';
import { RegistryEventCodec } from '../events/registry-codec.js';
import type { TopicNames } from '../events/topics.js';
import { busLogger } from '../observability/bus-logger.js';
import { kafkaLagSource } from '../observability/consumer-lag.js';
import type { ConsumerLagReader } from '../observability/consumer-lag.js';
import type { TopicSpec } from '../ports/event-bus.js';
import type { Catalog, CatalogFactory } from '../catalog/catalog.js';
import { loadCatalogFactory } from './catalog-module.js';
import type { ExecutionSettings, IdempotencySettings, PartitionCounts, PostgresSettings } from './env.js';
import type { ServiceContext } from './service.js';
import { retryWithBackoff, type Backoff } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../ports/logger.js';

/**
 * The clients toolgate's services open the same way, each registered to close with the service.
 * `ready: true` adds the client to /readyz: list only what the service cannot work without.
 */

/** How long a service waits for a Postgres connection (a new one, or a free one of its pool). */
const POSTGRES_CONNECT_TIMEOUT_MS = 10_000;

/**
 * A Postgres pool on a schema at the latest version. The version is read first, without DDL, so a
 * role with no right to change the schema starts when it is current. Pending migrations are applied
 * through `migrationUrl` (the owner role; a pool of one connection, closed afterwards) when given,
 * else through `url` itself. Rejects when the schema is not current and cannot be migrated: a
 * permission error then names DATABASE_MIGRATION_URL.
 */
export async function openPostgres(
  context: ServiceContext,
  options: {
    readonly url: string;
    readonly max: number;
    readonly ready: boolean;
    readonly migrationUrl?: string | undefined;
  },
): Promise<pg.Pool> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max,
    // A server that accepts and never answers, or a pool whose clients are all taken, fails the
    // query after this long instead of queueing it for good.
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
  });
  context.onClose('postgres', () => pool.end());
  if (options.ready) context.readyWhen('postgres', async () => (await pool.query('SELECT 1')).rowCount === 1);
  const pending = await pendingMigrations(pool).catch((err: unknown) => {
    throw withMigrationHint(err, 'cannot read schema_migrations to check the schema version');
  });
  if (pending.length === 0) return pool;
  const owner =
    options.migrationUrl === undefined
      ? pool
      : new pg.Pool({
          connectionString: options.migrationUrl,
          max: 1,
          connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
        });
  try {
    const migrated = await migrate(owner);
    if (migrated.applied.length > 0) context.logger.info({ applied: migrated.applied }, 'migrations applied');
  } catch (err) {
    throw withMigrationHint(err, `cannot apply the pending migrations (${pending.join(', ')})`);
  } finally {
    if (owner !== pool) await owner.end();
  }
  return pool;
}

/**
 * The service's own database (DATABASE_URL, DATABASE_POOL_MAX, and DATABASE_MIGRATION_URL where the
 * service reads it) opened by {@link openPostgres}, in /readyz.
 */
export function openServicePostgres(
  context: ServiceContext,
  settings: PostgresSettings & { readonly databaseMigrationUrl?: string | undefined },
): Promise<pg.Pool> {
  return openPostgres(context, {
    url: settings.databaseUrl,
    max: settings.databasePoolMax,
    ready: true,
    migrationUrl: settings.databaseMigrationUrl,
  });
}

/** SQLSTATE insufficient_privilege. */
const INSUFFICIENT_PRIVILEGE = '42501';

/** A permission error explained: which role must migrate, and how to give it to the service. */
function withMigrationHint(err: unknown, what: string): unknown {
  const code = (err as { code?: unknown; cause?: { code?: unknown } } | null) ?? {};
  if (code.code !== INSUFFICIENT_PRIVILEGE && code.cause?.code !== INSUFFICIENT_PRIVILEGE) return err;
  return new Error(
    `Postgres: ${what}: ${err instanceof Error ? err.message : String(err)}. Run the migrations with ` +
      "the schema owner's role: set DATABASE_MIGRATION_URL to it (the service then uses DATABASE_URL " +
      'only to work), or migrate ahead of time, and grant the service role SELECT on schema_migrations.',
    { cause: err },
  );
}

/**
 * A Redis client with {@link SERVICE_REDIS_OPTIONS}, in /readyz (a Redis Cluster client for a
 * `redis-cluster://` URL, see `connectRedis`): commands fail after two reconnection attempts instead
 * of queueing forever, and those issued in one event-loop turn share one write.
 */
export function openRedis(context: ServiceContext, url: string): Redis | Cluster {
  const redis = connectRedis(url, SERVICE_REDIS_OPTIONS);
  context.onClose('redis', () => redis.quit());
  context.readyWhen('redis', async () => (await redis.ping()) === 'PONG');
  return redis;
}

/**
 * The executors' idempotency records in Redis (see {@link openRedis}, in /readyz), on the key
 * prefix and with the replica acknowledgements the shared variables set: every service that reads
 * or settles them opens them here, so all agree.
 */
export function openIdempotency(
  context: ServiceContext,
  settings: IdempotencySettings,
): { readonly redis: Redis | Cluster; readonly idempotency: RedisIdempotencyStore } {
  const redis = openRedis(context, settings.redisUrl);
  const idempotency = new RedisIdempotencyStore(redis, {
    keyPrefix: settings.redisKeyPrefix,
    ...(settings.redisReplicaAcks === undefined ? {} : { replicaAcks: settings.redisReplicaAcks }),
  });
  return { redis, idempotency };
}

/** The topic config that makes a message's timestamp the broker's append time. */
export const TIMESTAMP_TYPE_CONFIG = 'message.timestamp.type';
/** The value of {@link TIMESTAMP_TYPE_CONFIG} the calls topic needs; the broker default is CreateTime. */
export const LOG_APPEND_TIME = 'LogAppendTime';

/** The configs the calls topic is created with (by the services and `toolgate topics create`). */
export const CALLS_TOPIC_CONFIGS: Readonly<Record<string, string>> = Object.freeze({
  [TIMESTAMP_TYPE_CONFIG]: LOG_APPEND_TIME,
});

/**
 * All four topics with their partition counts, for the services that ensure every one. The calls
 * topic is created with `message.timestamp.type=LogAppendTime`, so a call's timestamp is when the
 * broker accepted it (see `acceptanceTimeMs`).
 */
export function allTopics(topics: TopicNames, partitions: PartitionCounts): TopicSpec[] {
  return (['calls', 'results', 'audit', 'dlq'] as const).map((kind) => ({
    topic: topics[kind],
    partitions: partitions[kind],
    ...(kind === 'calls' ? { configs: CALLS_TOPIC_CONFIGS } : {}),
  }));
}

/**
 * A Postgres pool opened (as {@link openPostgres} does, migrations included) on the first call only,
 * and the same pool on every later call. Rejects naming DATABASE_URL when `url` is not set: a
 * service whose catalog never asks needs no database.
 */
export function lazyPostgres(
  context: ServiceContext,
  options: { readonly url: string | undefined; readonly max: number; readonly ready: boolean },
): () => Promise<pg.Pool> {
  let opening: Promise<pg.Pool> | undefined;
  return () => {
    const url = options.url;
    if (url === undefined) {
      return Promise.reject(
        new Error('the catalog needs Postgres, but DATABASE_URL is not set (postgres://user@host/db)'),
      );
    }
    opening ??= openPostgres(context, { url, max: options.max, ready: options.ready });
    return opening;
  };
}

/**
 * The tool catalog: `factory` when given, else the one the catalog module `module` names (see
 * `loadCatalogFactory`; undefined: the store catalog), built on the service's clock and its lazily
 * opened Postgres pool, and closed with the service.
 */
export async function openCatalog(
  context: ServiceContext,
  options: {
    readonly postgres: () => Promise<pg.Pool>;
    readonly module: string | undefined;
    readonly factory?: CatalogFactory | undefined;
  },
): Promise<Catalog> {
  const factory = options.factory ?? (await loadCatalogFactory(options.module));
  const catalog = await factory({ postgres: options.postgres, clock: context.clock });
  if (catalog.close !== undefined) context.onClose('catalog', () => catalog.close!());
  return catalog;
}

/** The bus and the registry codec, once `topics` exist with their partition counts. */
export interface KafkaClients {
  readonly bus: KafkaEventBus;
  readonly codec: RegistryEventCodec;
}

/**
 * The Kafka bus (logging through `busLogger`), its topics ensured and the event schemas
 * registered, both retried briefly at start-up (fresh topics and a booting registry answer
 * transiently wrong for a moment; see `retryStartupStep`).
 */
export async function openKafka(
  context: ServiceContext,
  ensure: readonly TopicSpec[],
): Promise<KafkaClients> {
  const { settings, topics } = context;
  const bus = new KafkaEventBus({
    brokers: settings.kafkaBrokers,
    clientId: context.instanceId,
    logger: busLogger(context.logger),
    sessionTimeoutMs: settings.kafka.sessionTimeoutMs,
    rebalanceTimeoutMs: settings.kafka.rebalanceTimeoutMs,
    heartbeatIntervalMs: settings.kafka.heartbeatMs,
  });
  context.onClose('kafka', () => bus.close());
  const retryDeps = { clock: context.clock, logger: context.logger };
  await retryStartupStep('ensure topics', () => bus.ensureTopics(ensure), retryDeps);
  const codec = await retryStartupStep(
    'register schemas',
    () => RegistryEventCodec.create({ url: settings.schemaRegistryUrl, topics }),
    retryDeps,
  );
  return { bus, codec };
}

/** What {@link openSettlementClients} opens. */
export interface SettlementClients extends KafkaClients {
  readonly pool: pg.Pool;
  /** The Redis client the idempotency records are on (shared by the service's other Redis state). */
  readonly redis: Redis | Cluster;
  readonly idempotency: RedisIdempotencyStore;
  readonly catalog: Catalog;
}

/**
 * The clients of a service that settles the executors' calls from its own database (the reconciler,
 * the ops console), opened in this order and closed in reverse: its Postgres pool
 * ({@link openServicePostgres}), the executors' idempotency records ({@link openIdempotency}), the
 * Kafka bus and codec once the topics `ensure` lists exist ({@link openKafka}), and the executors'
 * catalog on that pool ({@link openCatalog}: `catalog` when given, else `settings.catalogModule`).
 */
export async function openSettlementClients(
  context: ServiceContext,
  settings: ExecutionSettings & PostgresSettings,
  ensure: readonly TopicSpec[],
  catalog: CatalogFactory | undefined,
): Promise<SettlementClients> {
  const pool = await openServicePostgres(context, settings);
  const { redis, idempotency } = openIdempotency(context, settings);
  const { bus, codec } = await openKafka(context, ensure);
  const opened = await openCatalog(context, {
    postgres: () => Promise.resolve(pool),
    module: settings.catalogModule,
    factory: catalog,
  });
  return { pool, redis, idempotency, bus, codec, catalog: opened };
}

/**
 * A plain kafkajs client of this instance (client id `<instance id>-<role>`, kafkajs' own logging
 * off), for a reader that needs neither the bus nor the registry, e.g. the one that reads an
 * original call back from the calls topic. It holds no connection itself: whoever makes a
 * consumer or an admin of it closes that.
 */
export function kafkaClient(context: ServiceContext, role: string): Kafka {
  return new Kafka({
    brokers: [...context.settings.kafkaBrokers],
    clientId: `${context.instanceId}-${role}`,
    logLevel: logLevel.NOTHING,
  });
}

/** The consumer group's lag on `topics`, read at scrape time through an admin client of its own. */
export function openConsumerLag(
  context: ServiceContext,
  options: { readonly groupId: string; readonly topics: readonly string[] },
): ConsumerLagReader {
  const lag = kafkaLagSource({
    brokers: context.settings.kafkaBrokers,
    clientId: `${context.instanceId}-lag`,
    logger: busLogger(context.logger),
    groupId: options.groupId,
    topics: options.topics,
  });
  context.onClose('consumer lag', () => lag.close());
  return lag.read;
}

/** 6 attempts, 250 ms doubling: about 8 s before a start-up step is declared failed. */
export const STARTUP_RETRY: Backoff & { readonly attempts: number } = {
  attempts: 6,
  baseDelayMs: 250,
  maxDelayMs: 4_000,
};

/**
 * Runs an idempotent start-up step (creating topics, registering schemas), retrying a few times
 * when it fails. Servers that were just started — or topics just created — answer transiently
 * wrong for a moment (kafkajs' createTopics can report "This server does not host this
 * topic-partition" while new metadata propagates; a registry may refuse connections while it
 * boots). Every error is retried, without jitter (one process, one step); each retry is logged at
 * warn. Rejects with the last error once the attempts are used up, so a real misconfiguration still
 * stops the process (exit 1) quickly.
 */
export function retryStartupStep<T>(
  what: string,
  step: () => Promise<T>,
  deps: { readonly clock: Clock; readonly logger: Logger },
  policy: Backoff & { readonly attempts: number } = STARTUP_RETRY,
): Promise<T> {
  return retryWithBackoff(step, {
    backoff: policy,
    clock: deps.clock,
    maxAttempts: policy.attempts,
    onRetry: ({ err, retry, delayMs }) =>
      deps.logger.warn({ err, step: what, attempt: retry, delayMs }, 'start-up step failed; retrying'),
  });
}
