import type { Tracer } from '@opentelemetry/api';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Logger as PinoLogger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { RedisIdempotencyStore, RedisRateLimiter } from '../../libs/adapters/redis/index.js';
import { migrate } from '../../libs/adapters/postgres/migrate.js';
import { createPrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import { systemClock } from '../../libs/core/system-clock.js';
import { RegistryEventCodec } from '../../libs/events/registry-codec.js';
import { topicNames } from '../../libs/events/topics.js';
import { createCircuitBreakers } from '../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../libs/execution/outbound-limiter.js';
import { busLogger } from '../../libs/observability/bus-logger.js';
import { kafkaLagSource } from '../../libs/observability/consumer-lag.js';
import { startHealthServer } from '../../libs/observability/health-server.js';
import { createLogger } from '../../libs/observability/logger.js';
import { readinessChecks } from '../../libs/observability/readiness.js';
import { GuardPipeline } from '../../libs/pipeline/guard-pipeline.js';
import { loadCatalogFactory, type Catalog, type CatalogFactory } from './catalog.js';
import type { ExecutorConfig } from './config.js';
import { createExecutor, type Executor } from './executor.js';
import { retryStartupStep } from './startup-retry.js';
import { createExecutorTelemetry } from './telemetry.js';

/** What a caller may supply instead of what the configuration names. */
export interface ExecutorServiceOptions {
  /** Default: a pino JSON logger (createLogger) on stdout at `config.logLevel`. */
  readonly logger?: PinoLogger;
  /** Default: the factory exported by `config.catalogModule`. */
  readonly catalog?: CatalogFactory;
  /** Default: toolgate's tracer on the global provider (a no-op until an OpenTelemetry SDK is registered). */
  readonly tracer?: Tracer;
}

/** An executor process: start it once, stop it once (both idempotent in effect). */
export interface ExecutorService {
  /** The process registry /metrics serves (default Node metrics and toolgate's). */
  readonly registry: Registry;
  /**
   * Opens everything and joins the group. Resolves with the bound port of /metrics, /healthz and
   * /readyz (the chosen one when HTTP_PORT is 0). Rejects when a start-up step fails, after closing
   * whatever it had opened, or when called a second time.
   */
  start(): Promise<{ readonly healthPort: number }>;
  /**
   * Stops gracefully: /readyz answers 503 at once, running calls finish, their outputs publish and
   * offsets commit, then every client closes and the endpoint last. A stop during start-up is
   * honoured: the executor is never started, and what was opened is closed. Idempotent.
   */
  stop(reason?: string): Promise<void>;
}

/**
 * An executor from its configuration (nothing opens before `start()`): the only place real adapters are wired (Kafka bus,
 * registry codec, Redis idempotency and rate limits, Postgres for the catalog and migrations,
 * breakers, outbound limiter, guard pipeline) together with its observability — the health server
 * on `config.httpPort` (up first, so probes answer during start-up), a process registry with the
 * default Node metrics and toolgate's (breaker state, consumer lag), stage and call spans, and
 * pino JSON logs. /readyz is ready while the executor is started and not stopping and Redis answers.
 */
export function createExecutorService(
  config: ExecutorConfig,
  options: ExecutorServiceOptions = {},
): ExecutorService {
  const logger =
    options.logger ??
    createLogger({ level: config.logLevel, name: 'executor', base: { executorId: config.executorId } });
  const clock = systemClock;
  const topics = topicNames(config.topicPrefix);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const closers: Array<[string, () => Promise<unknown> | void]> = [];
  let phase: 'starting' | 'running' | 'stopping' = 'starting';
  let executor: Executor | undefined;
  let starting: Promise<{ readonly healthPort: number }> | undefined;
  let stopping: Promise<void> | undefined;

  const closeAll = async (): Promise<void> => {
    for (const [name, close] of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        logger.warn({ err, resource: name }, 'close failed');
      }
    }
  };
  const stop = (reason = 'stop requested'): Promise<void> => {
    stopping ??= (async () => {
      phase = 'stopping';
      logger.info({ reason }, 'stopping');
      await starting?.catch(() => undefined);
      await executor?.stop();
      await closeAll();
      logger.info('stopped');
    })();
    return stopping;
  };

  const open = async (): Promise<{ readonly healthPort: number }> => {
    const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2 });
    closers.push(['redis', () => redis.quit()]);
    const health = await startHealthServer({
      port: config.httpPort,
      registry,
      readiness: readinessChecks({
        lifecycle: () => (phase === 'running' ? true : phase),
        redis: async () => (await redis.ping()) === 'PONG',
      }),
    });
    // First in, so closed last: probes and scrapes are answered until everything else is closed.
    closers.unshift(['health server', () => health.close()]);

    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10 });
    closers.push(['postgres', () => pool.end()]);
    const migrated = await migrate(pool);
    if (migrated.applied.length > 0) logger.info({ applied: migrated.applied }, 'migrations applied');

    const bus = new KafkaEventBus({
      brokers: config.kafkaBrokers,
      clientId: config.executorId,
      logger: busLogger(logger),
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

    const factory = options.catalog ?? (await loadCatalogFactory(config.catalogModule));
    const catalog: Catalog = await factory({ pool, clock });
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
    const lag = kafkaLagSource({
      brokers: config.kafkaBrokers,
      clientId: `${config.executorId}-lag`,
      logger: busLogger(logger),
      groupId: config.groupId,
      topics: [topics.calls],
    });
    closers.push(['consumer lag', () => lag.close()]);
    const telemetry = createExecutorTelemetry({
      registry,
      tools: catalog.registry,
      clock,
      breakerStates: () => breakers.states(),
      consumerLag: lag.read,
      ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    });
    const pipeline = new GuardPipeline(
      {
        tools: catalog.registry,
        idempotency: new RedisIdempotencyStore(redis, { keyPrefix: config.redisKeyPrefix }),
        rateLimiter,
        policy: catalog.policy,
        breakers,
        outbound: createOutboundLimiter(rateLimiter, catalog.downstreamLimits, clock),
        clock,
        owner: config.executorId,
        settings: { resultTtlMs: config.resultTtlMs, leaseMarginMs: config.leaseMarginMs },
        observer: telemetry.pipelineObserver,
      },
      telemetry.stages,
    );

    executor = createExecutor({
      publisher: bus,
      subscriber: bus,
      codec,
      topics,
      replyTopics: { [topics.results]: config.partitions.results },
      pipeline: telemetry.instrument(pipeline),
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
      observer: telemetry.observer,
      ownerId: config.executorId,
      groupId: config.groupId,
      maxConcurrency: config.maxConcurrency,
      partitionsConcurrently: config.partitionsConcurrently,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
    });
    // A stop that arrived during start-up wins: the executor is never started.
    if (stopping === undefined) await executor.start();
    if (stopping === undefined) phase = 'running';
    return { healthPort: health.port };
  };

  return {
    registry,
    start() {
      if (starting !== undefined)
        return Promise.reject(new Error('the executor service was already started'));
      starting = open().catch(async (err: unknown) => {
        logger.error({ err }, 'executor failed to start');
        await closeAll();
        throw err;
      });
      return starting;
    },
    stop,
  };
}
