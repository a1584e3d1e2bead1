import { Redis } from 'ioredis';
import pg from 'pg';
import { pino } from 'pino';
import { PostgresCaseStore } from '../../libs/adapters/postgres/case-store.js';
import { migrate } from '../../libs/adapters/postgres/migrate.js';
import { RedisIdempotencyStore } from '../../libs/adapters/redis/redis-idempotency-store.js';
import { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import { systemClock } from '../../libs/core/system-clock.js';
import { RegistryEventCodec } from '../../libs/events/registry-codec.js';
import { topicNames } from '../../libs/events/topics.js';
import { retryStartupStep } from '../executor/startup-retry.js';
import { loadCatalogFactory } from '../executor/catalog.js';
import { loadReconcilerConfig, ReconcilerConfigError } from './config.js';
import { createReconciler, type Reconciler } from './reconciler.js';

/**
 * The reconciler process: Kafka (dead letters in; results and audit records out), the schema
 * registry, Postgres (cases; migrated at start), the executors' Redis idempotency store, and the
 * executors' tool catalog (loaded like the executor loads it, from TOOLGATE_CATALOG_MODULE). SIGTERM
 * or SIGINT stops it: no new dead letter or check starts, checks in progress finish, deliveries get
 * SHUTDOWN_GRACE_MS; it exits 0. A failed start exits 1. Run with `npx tsx services/reconciler/main.ts`.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadReconcilerConfig();
  } catch (err) {
    process.stderr.write(`${err instanceof ReconcilerConfigError ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const logger = pino({
    level: config.logLevel,
    base: { service: 'reconciler', reconcilerId: config.reconcilerId },
  });
  const clock = systemClock;
  const topics = topicNames(config.topicPrefix);
  const closers: Array<[string, () => Promise<unknown>]> = [];
  const closeAll = async (): Promise<void> => {
    for (const [name, close] of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        logger.warn({ err, resource: name }, 'close failed');
      }
    }
  };

  let reconciler: Reconciler | undefined;
  let shuttingDown: Promise<void> | undefined;
  const shutdown = (signal: string): Promise<void> => {
    shuttingDown ??= (async () => {
      logger.info({ signal }, 'stopping');
      await reconciler?.stop();
      await closeAll();
      logger.info('stopped');
    })();
    return shuttingDown;
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void shutdown(signal));

  try {
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.databasePoolMax });
    closers.push(['postgres', () => pool.end()]);
    const migrated = await migrate(pool);
    if (migrated.applied.length > 0) logger.info({ applied: migrated.applied }, 'migrations applied');

    const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2 });
    closers.push(['redis', () => redis.quit()]);

    const bus = new KafkaEventBus({
      brokers: config.kafkaBrokers,
      clientId: config.reconcilerId,
      logger: logger.child({ component: 'bus' }),
      sessionTimeoutMs: config.kafka.sessionTimeoutMs,
      rebalanceTimeoutMs: config.kafka.rebalanceTimeoutMs,
      heartbeatIntervalMs: config.kafka.heartbeatMs,
    });
    closers.push(['kafka', () => bus.close()]);
    // Fresh topics and a booting registry answer transiently wrong for a moment (see retryStartupStep).
    const retryDeps = { clock: systemClock, logger };
    await retryStartupStep(
      'ensure topics',
      () =>
        bus.ensureTopics([
          { topic: topics.calls, partitions: config.partitions.calls },
          { topic: topics.results, partitions: config.partitions.results },
          { topic: topics.audit, partitions: config.partitions.audit },
          { topic: topics.dlq, partitions: config.partitions.dlq },
        ]),
      retryDeps,
    );
    const codec = await retryStartupStep(
      'register schemas',
      () => RegistryEventCodec.create({ url: config.schemaRegistryUrl, topics }),
      retryDeps,
    );

    const catalog = await (await loadCatalogFactory(config.catalogModule))({ pool, clock });
    if (catalog.close) closers.push(['catalog', () => catalog.close!()]);

    reconciler = createReconciler({
      subscriber: bus,
      publisher: bus,
      codec,
      topics,
      cases: new PostgresCaseStore(pool, clock),
      idempotency: new RedisIdempotencyStore(redis, { keyPrefix: config.redisKeyPrefix }),
      tools: catalog.registry,
      clock,
      logger: logger.child({ component: 'reconciler' }),
      reconcilerId: config.reconcilerId,
      groupId: config.groupId,
      replyTopics: { [topics.results]: config.partitions.results },
      resultTtlMs: config.resultTtlMs,
      checkScheduleMs: config.checkScheduleMs,
      ...(config.checkTimeoutMs === undefined ? {} : { checkTimeoutMs: config.checkTimeoutMs }),
      pollIntervalMs: config.pollIntervalMs,
      checkConcurrency: config.checkConcurrency,
      partitionsConcurrently: config.partitionsConcurrently,
      shutdownGraceMs: config.shutdownGraceMs,
    });
    if (shuttingDown === undefined) await reconciler.start();
    // A signal that arrived during start-up stops the reconciler now that it can.
    if (shuttingDown !== undefined) await shutdown('start-up interrupted');
  } catch (err) {
    logger.error({ err }, 'reconciler failed to start');
    process.exitCode = 1;
    await closeAll();
  }
}

await main();
