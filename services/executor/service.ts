import type { Tracer } from '@opentelemetry/api';
import {
  RedisIdempotencyStore,
  RedisIdempotencyTombstones,
  RedisRateLimiter,
} from '../../libs/adapters/redis/index.js';
import { createPrincipalVerifier } from '../../libs/auth/principal-verifier.js';
import { coalescingPublisher } from '../../libs/bus/coalescing-publisher.js';
import { topicNames } from '../../libs/events/topics.js';
import { createCircuitBreakers } from '../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../libs/execution/outbound-limiter.js';
import { GuardPipeline } from '../../libs/pipeline/guard-pipeline.js';
import { callsTimestampsTrusted } from './acceptance-time.js';
import type { CatalogFactory } from './catalog.js';
import type { ExecutorConfig } from './config.js';
import { createExecutor } from './executor.js';
import {
  allTopics,
  openCatalog,
  openConsumerLag,
  openKafka,
  openPostgres,
  openRedis,
} from './service-clients.js';
import { createService, type Service, type ServiceOptions } from './service-runtime.js';
import { createExecutorTelemetry } from './telemetry.js';

/** What a caller may supply instead of what the configuration names. */
export interface ExecutorServiceOptions extends ServiceOptions {
  /** Default: the factory exported by `config.catalogModule`. */
  readonly catalog?: CatalogFactory;
  /** Default: toolgate's tracer on the global provider (a no-op until an OpenTelemetry SDK is registered). */
  readonly tracer?: Tracer;
}

/**
 * The executor process from its configuration (nothing opens before `start()`): the only place
 * real adapters are wired — Kafka bus, registry codec, Redis idempotency and rate limits, Postgres
 * for the catalog and migrations, breakers, outbound limiter, guard pipeline — with its
 * observability: toolgate's metrics in the process registry (breaker state and the group's lag on
 * the calls topic read at scrape time), the pipeline's stage observer and spans, the instrumented
 * pipeline around every call, and the executor's observer for what it answers itself. /readyz
 * adds "Redis answers" to the lifecycle check (see `createService`).
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
      const pool = await openPostgres(context, { url: config.databaseUrl, max: 10, ready: false });
      const { bus, codec } = await openKafka(context, {
        settings: config,
        clientId: config.executorId,
        topics,
        ensure: allTopics(topics, config.partitions),
      });
      const catalog = await openCatalog(context, {
        pool,
        module: config.catalogModule,
        factory: options.catalog,
      });

      const trustsMessageTimestamps = await callsTimestampsTrusted(
        (topic, name) => bus.topicConfig(topic, name),
        topics.calls,
        logger,
      );
      const idempotency = new RedisIdempotencyStore(redis, { keyPrefix: config.redisKeyPrefix });
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
      context.onClose('breakers', () => breakers.shutdown());
      const telemetry = createExecutorTelemetry({
        registry: context.registry,
        tools: catalog.registry,
        clock,
        breakerStates: () => breakers.states(),
        outboundDownstreams: Object.keys(catalog.downstreamLimits),
        consumerLag: openConsumerLag(context, {
          settings: config,
          clientId: config.executorId,
          groupId: config.groupId,
          topics: [topics.calls],
        }),
        ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
      });
      const pipeline = new GuardPipeline(
        {
          tools: catalog.registry,
          idempotency,
          ...(config.tombstoneTtlMs === 0
            ? {}
            : { tombstones: new RedisIdempotencyTombstones(redis, { keyPrefix: config.redisKeyPrefix }) }),
          rateLimiter,
          policy: catalog.policy,
          breakers,
          outbound: createOutboundLimiter(rateLimiter, catalog.downstreamLimits, clock, (downstream, ms) =>
            telemetry.metrics.observeOutboundWait(downstream, ms),
          ),
          clock,
          owner: config.executorId,
          settings: {
            resultTtlMs: config.resultTtlMs,
            leaseMarginMs: config.leaseMarginMs,
            tombstoneTtlMs: config.tombstoneTtlMs,
          },
          observer: telemetry.pipelineObserver,
        },
        telemetry.stages,
      );
      return createExecutor({
        // Outputs of concurrent calls share produce requests (see BENCHMARKS.md, throughput).
        publisher: coalescingPublisher(bus),
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
        trustsMessageTimestamps,
        idempotency,
        clock,
        logger: logger.child({ component: 'executor' }),
        observer: telemetry.observer,
        ownerId: config.executorId,
        groupId: config.groupId,
        maxConcurrency: config.maxConcurrency,
        shutdownTimeoutMs: config.shutdownTimeoutMs,
        maxRawPayloadBytes: config.poisonCaptureBytes,
      });
    },
  });
}
