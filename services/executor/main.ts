import { Redis } from 'ioredis';
import pg from 'pg';
import { pino } from 'pino';
import { RedisIdempotencyStore, RedisRateLimiter } from '../../libs/adapters/redis/index.js';
import { migrate } from '../../libs/adapters/postgres/migrate.js';
import { createPrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import { systemClock } from '../../libs/core/system-clock.js';
import { RegistryEventCodec } from '../../libs/events/registry-codec.js';
import { topicNames } from '../../libs/events/topics.js';
import { createCircuitBreakers } from '../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../libs/execution/outbound-limiter.js';
import { GuardPipeline } from '../../libs/pipeline/guard-pipeline.js';
import { loadCatalogFactory, type Catalog } from './catalog.js';
import { ExecutorConfigError, loadExecutorConfig } from './config.js';
import { createExecutor } from './executor.js';
import { retryStartupStep } from './startup-retry.js';

/**
 * The executor process: the only place real adapters are wired (Kafka bus, registry codec, Redis
 * idempotency and rate limits, Postgres for the catalog and migrations, breakers, outbound limiter,
 * guard pipeline). SIGTERM or SIGINT stops it gracefully (running calls finish, outputs publish,
 * offsets commit) and it exits 0; a failed start exits 1. Run with `npx tsx services/executor/main.ts`.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadExecutorConfig();
  } catch (err) {
    process.stderr.write(`${err instanceof ExecutorConfigError ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const logger = pino({
    level: config.logLevel,
    base: { service: 'executor', executorId: config.executorId },
  });
  const clock = systemClock;
  const topics = topicNames(config.topicPrefix);
  const closers: Array<[string, () => Promise<unknown> | void]> = [];
  const closeAll = async (): Promise<void> => {
    for (const [name, close] of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        logger.warn({ err, resource: name }, 'close failed');
      }
    }
  };

  let stopExecutor: (() => Promise<void>) | undefined;
  let shuttingDown: Promise<void> | undefined;
  const shutdown = (signal: string): Promise<void> => {
    shuttingDown ??= (async () => {
      logger.info({ signal }, 'stopping');
      await stopExecutor?.();
      await closeAll();
      logger.info('stopped');
    })();
    return shuttingDown;
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void shutdown(signal));

  try {
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10 });
    closers.push(['postgres', () => pool.end()]);
    const migrated = await migrate(pool);
    if (migrated.applied.length > 0) logger.info({ applied: migrated.applied }, 'migrations applied');

    const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2 });
    closers.push(['redis', () => redis.quit()]);

    const bus = new KafkaEventBus({
      brokers: config.kafkaBrokers,
      clientId: config.executorId,
      logger: logger.child({ component: 'bus' }),
      sessionTimeoutMs: config.kafka.sessionTimeoutMs,
      rebalanceTimeoutMs: config.kafka.rebalanceTimeoutMs,
      heartbeatIntervalMs: config.kafka.heartbeatMs,
    });
    closers.push(['kafka', () => bus.close()]);
    const retryDeps = { clock, logger };
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

    const catalog: Catalog = await (await loadCatalogFactory(config.catalogModule))({ pool, clock });
    if (catalog.close) closers.push(['catalog', () => catalog.close!()]);

    const rateLimiter = new RedisRateLimiter(redis, { keyPrefix: config.redisKeyPrefix });
    const breakers = createCircuitBreakers(
      {
        errorThresholdPercentage: config.breaker.errorPercent,
        volumeThreshold: config.breaker.volume,
        resetTimeoutMs: config.breaker.resetMs,
        timeoutMs: false,
      },
      clock,
    );
    closers.push(['breakers', () => breakers.shutdown()]);
    const pipeline = new GuardPipeline({
      tools: catalog.registry,
      idempotency: new RedisIdempotencyStore(redis, { keyPrefix: config.redisKeyPrefix }),
      rateLimiter,
      policy: catalog.policy,
      breakers,
      outbound: createOutboundLimiter(rateLimiter, catalog.downstreamLimits, clock),
      clock,
      owner: config.executorId,
      settings: { resultTtlMs: config.resultTtlMs, leaseMarginMs: config.leaseMarginMs },
    });

    const executor = createExecutor({
      publisher: bus,
      subscriber: bus,
      codec,
      topics,
      replyTopics: { [topics.results]: config.partitions.results },
      pipeline,
      tools: catalog.registry,
      verifier: createPrincipalVerifier({
        keys: config.principal.jwks,
        issuer: config.principal.issuer,
        audience: config.principal.audience,
        ...(config.principal.maxTokenAgeSec === undefined
          ? {}
          : { maxTokenAgeSec: config.principal.maxTokenAgeSec }),
      }),
      clock,
      logger: logger.child({ component: 'executor' }),
      ownerId: config.executorId,
      groupId: config.groupId,
      maxConcurrency: config.maxConcurrency,
      partitionsConcurrently: config.partitionsConcurrently,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
    });
    stopExecutor = () => executor.stop();
    if (shuttingDown === undefined) await executor.start();
    // A signal that arrived during start-up stops the executor now that it can.
    if (shuttingDown !== undefined) await shutdown('start-up interrupted');
  } catch (err) {
    logger.error({ err }, 'executor failed to start');
    process.exitCode = 1;
    await closeAll();
  }
}

await main();
