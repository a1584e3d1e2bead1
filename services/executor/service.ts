import type { Tracer } from '@opentelemetry/api';
import {
  RedisIdempotencyStore,
  RedisIdempotencyTombstones,
  RedisRateLimiter,
} from '../../libs/adapters/redis/index.js';
import { createPrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import type { CatalogFactory } from '../../libs/catalog/catalog.js';
import { topicNames } from '../../libs/events/topics.js';
import { callsTimestampsTrusted } from './acceptance-time.js';
import type { ExecutorConfig } from './config.js';
import { createExecutor } from './create-executor.js';
import {
  allTopics,
  lazyPostgres,
  openCatalog,
  openConsumerLag,
  openKafka,
  openRedis,
} from './service-clients.js';
import { createService, type Service, type ServiceOptions } from './service-runtime.js';

/** What a caller may supply instead of what the configuration names. */
export interface ExecutorServiceOptions extends ServiceOptions {
  /** Default: the catalog module `config.catalogModule` names (see `loadCatalogFactory`). */
  readonly catalog?: CatalogFactory;
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
  const topics = topicNames(config.topicPrefix);
  return createService({
    name: 'executor',
    settings: config,
    base: { executorId: config.executorId },
    logger: options.logger,
    async open(context) {
      const { clock, logger } = context;
      const redis = openRedis(context, { url: config.redisUrl, ready: true });
      const { bus, codec } = await openKafka(context, {
        settings: config,
        clientId: config.executorId,
        topics,
        ensure: allTopics(topics, config.partitions),
      });
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
        idempotency: new RedisIdempotencyStore(redis, {
          keyPrefix: config.redisKeyPrefix,
          ...(config.redisReplicaAcks === undefined ? {} : { replicaAcks: config.redisReplicaAcks }),
        }),
        tombstones: new RedisIdempotencyTombstones(redis, { keyPrefix: config.redisKeyPrefix }),
        rateLimiter: new RedisRateLimiter(redis, { keyPrefix: config.redisKeyPrefix }),
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
          consumerLag: openConsumerLag(context, {
            settings: config,
            clientId: config.executorId,
            groupId: config.groupId,
            topics: [topics.calls],
          }),
          ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
        },
        clock,
        logger: logger.child({ component: 'executor' }),
      });
    },
  });
}
