import type { Cluster, Redis } from 'ioredis';
import { connectRedis } from '../../libs/adapters/redis/connect.js';
import pg from 'pg';
import { migrate, pendingMigrations } from '../../libs/adapters/postgres/migrate.js';
import { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import { RegistryEventCodec } from '../../libs/events/registry-codec.js';
import type { TopicNames } from '../../libs/events/topics.js';
import { busLogger } from '../../libs/observability/bus-logger.js';
import { kafkaLagSource } from '../../libs/observability/consumer-lag.js';
import type { ConsumerLagReader } from '../../libs/observability/consumer-lag.js';
import type { TopicSpec } from '../../libs/ports/event-bus.js';
import { CALLS_TOPIC_CONFIGS } from './acceptance-time.js';
import type { Catalog, CatalogFactory } from '../../libs/catalog/catalog.js';
import { loadCatalogFactory } from './catalog.js';
import type { PartitionCounts, ServiceSettings } from './service-env.js';
import type { ServiceContext } from './service-runtime.js';
import { retryStartupStep } from './startup-retry.js';

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
 * A Redis client (a Redis Cluster client for a `redis-cluster://` URL, see `connectRedis`); commands
 * fail after two reconnection attempts instead of queueing forever.
 */
export function openRedis(
  context: ServiceContext,
  options: { readonly url: string; readonly ready: boolean },
): Redis | Cluster {
  const redis = connectRedis(options.url, { maxRetriesPerRequest: 2 });
  context.onClose('redis', () => redis.quit());
  if (options.ready) context.readyWhen('redis', async () => (await redis.ping()) === 'PONG');
  return redis;
}

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
  options: {
    readonly settings: ServiceSettings;
    readonly clientId: string;
    readonly topics: TopicNames;
    readonly ensure: readonly TopicSpec[];
  },
): Promise<KafkaClients> {
  const { settings } = options;
  const bus = new KafkaEventBus({
    brokers: settings.kafkaBrokers,
    clientId: options.clientId,
    logger: busLogger(context.logger),
    sessionTimeoutMs: settings.kafka.sessionTimeoutMs,
    rebalanceTimeoutMs: settings.kafka.rebalanceTimeoutMs,
    heartbeatIntervalMs: settings.kafka.heartbeatMs,
  });
  context.onClose('kafka', () => bus.close());
  const retryDeps = { clock: context.clock, logger: context.logger };
  await retryStartupStep('ensure topics', () => bus.ensureTopics(options.ensure), retryDeps);
  const codec = await retryStartupStep(
    'register schemas',
    () => RegistryEventCodec.create({ url: settings.schemaRegistryUrl, topics: options.topics }),
    retryDeps,
  );
  return { bus, codec };
}

/** The consumer group's lag on `topics`, read at scrape time through an admin client of its own. */
export function openConsumerLag(
  context: ServiceContext,
  options: {
    readonly settings: ServiceSettings;
    readonly clientId: string;
    readonly groupId: string;
    readonly topics: readonly string[];
  },
): ConsumerLagReader {
  const lag = kafkaLagSource({
    brokers: options.settings.kafkaBrokers,
    clientId: `${options.clientId}-lag`,
    logger: busLogger(context.logger),
    groupId: options.groupId,
    topics: options.topics,
  });
  context.onClose('consumer lag', () => lag.close());
  return lag.read;
}
