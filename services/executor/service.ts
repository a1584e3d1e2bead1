import type { Tracer } from '@opentelemetry/api';
import {
  RedisFactStore,
  RedisIdempotencyTombstones,
  RedisRateLimiter,
} from '../../libs/adapters/redis/index.js';
import { createPrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import { callsTimestampsTrusted } from './acceptance-time.js';
import { loadExecutorConfig, type ExecutorConfig } from './config.js';
import { createExecutor } from './create-executor.js';
import {
  allTopics,
  lazyPostgres,
  openCatalog,
  openConsumerLag,
  openIdempotency,
  openKafka,
} from '../../libs/runtime/clients.js';
import {
  createConfiguredService,
  type CatalogServiceOptions,
  type Service,
  type ServiceMain,
} from '../../libs/runtime/service.js';

/** What a caller may supply instead of what the configuration names. */
export interface ExecutorServiceOptions extends CatalogServiceOptions {
  /** Default: toolgate's tracer on the global provider (a no-op until an OpenTelemetry SDK is registered). */
  readonly tracer?: Tracer;
}

/**
 * The executor process from its configuration (nothing opens before `start()`): Kafka bus and
 * registry codec, Redis idempotency and rate limits, the catalog (Postgres only when the catalog
 * asks for it), all built into one executor by `createExecutor` with the process's metrics
 * registry (breaker state and the group's lag on the calls topic read at scrape time) and tracer.
 * /readyz adds "Redis answers" to the lifecycle check (see `createService`).
 */
export function createExecutorService(config: ExecutorConfig, options: ExecutorServiceOptions = {}): Service {
  return createConfiguredService('executor', config, 'executorId', options, async (context) => {
    const { clock, logger, topics } = context;
    const { redis, idempotency } = openIdempotency(context, config);
    const { bus, codec } = await openKafka(context, allTopics(topics, config.partitions));
    const catalog = await openCatalog(context, {
      postgres: lazyPostgres(context, { url: config.databaseUrl, max: 10, ready: false }),
      module: config.catalogModule,
      factory: options.catalog,
    });
    return createExecutor({
      catalog,
      bus,
      codec,
      topics,
      replyTopics: { [topics.results]: config.partitions.results },
      idempotency,
      tombstones: new RedisIdempotencyTombstones(redis, { keyPrefix: config.redisKeyPrefix }),
      rateLimiter: new RedisRateLimiter(redis, { keyPrefix: config.redisKeyPrefix }),
      facts: new RedisFactStore(redis, { keyPrefix: config.redisKeyPrefix }),
      verifier: createPrincipalVerifier({
        keys: config.principal.jwks,
        issuer: config.principal.issuer,
        audience: config.principal.audience,
        ...(config.principal.maxTokenAgeSec === undefined
          ? {}
          : { maxTokenAgeSec: config.principal.maxTokenAgeSec }),
      }),
      trustsMessageTimestamps: await callsTimestampsTrusted(
        (topic, name) => bus.topicConfig(topic, name),
        topics.calls,
        logger,
      ),
      ownerId: config.executorId,
      groupId: config.groupId,
      settings: {
        maxConcurrency: config.maxConcurrency,
        breaker: config.breaker,
        resultTtlMs: config.resultTtlMs,
        leaseMarginMs: config.leaseMarginMs,
        tombstoneTtlMs: config.tombstoneTtlMs,
        shutdownTimeoutMs: config.shutdownTimeoutMs,
        poisonCaptureBytes: config.poisonCaptureBytes,
      },
      instrumentation: {
        registry: context.registry,
        consumerLag: openConsumerLag(context, { groupId: config.groupId, topics: [topics.calls] }),
        ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
      },
      clock,
      logger: logger.child({ component: 'executor' }),
    });
  });
}

/** `toolgate executor`, and main.ts: the executor process from the environment. */
export const EXECUTOR_MAIN: ServiceMain<ExecutorConfig> = {
  command: 'executor',
  summary: 'run an executor: calls from Kafka through the guard pipeline to your tools',
  serviceName: 'toolgate-executor',
  load: () => loadExecutorConfig(),
  catalogModule: (config) => config.catalogModule,
  create: (config, catalog) => createExecutorService(config, { catalog }),
};
