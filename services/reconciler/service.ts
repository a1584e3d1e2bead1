import { PostgresCaseStore } from '../../libs/adapters/postgres/case-store.js';
import { createToolgateMetrics } from '../../libs/observability/metrics.js';
import { knownToolsOf } from '../../libs/observability/pipeline-metrics.js';
import { postgresCaseCounts } from '../../libs/observability/postgres-case-counts.js';
import type { CatalogFactory } from '../../libs/catalog/catalog.js';
import {
  allTopics,
  kafkaClient,
  openCatalog,
  openConsumerLag,
  openIdempotency,
  openKafka,
  openPostgres,
} from '../../libs/runtime/clients.js';
import {
  createService,
  type Service,
  type ServiceMain,
  type ServiceOptions,
} from '../../libs/runtime/service.js';
import { loadReconcilerConfig, type ReconcilerConfig } from './config.js';
import { createReconciler } from './reconciler.js';
import { kafkaOriginalCalls } from '../../libs/reconcile/original-call.js';

/** What a caller may supply instead of what the configuration names. */
export interface ReconcilerServiceOptions extends ServiceOptions {
  /** Default: the factory exported by `config.catalogModule` (the executors' catalog). */
  readonly catalog?: CatalogFactory;
}

/**
 * The reconciler process from its configuration (nothing opens before `start()`): Kafka (dead
 * letters in; results and audit records out), the schema registry, Postgres (cases; migrated at
 * start), the executors' Redis idempotency store, and the executors' tool catalog (loaded like the
 * executor loads it), with toolgate's metrics in the process registry — unfinished cases per state
 * (`postgresCaseCounts`) and the group's lag on the dead-letter topic, both read at scrape time.
 * /readyz adds "Postgres answers" and "Redis answers" to the lifecycle check (see `createService`).
 * Stopping: no new dead letter or check starts, checks in progress finish, deliveries get
 * SHUTDOWN_GRACE_MS.
 */
export function createReconcilerService(
  config: ReconcilerConfig,
  options: ReconcilerServiceOptions = {},
): Service {
  return createService({
    name: 'reconciler',
    settings: config,
    instance: { field: 'reconcilerId', id: config.reconcilerId },
    logger: options.logger,
    async open(context) {
      const { clock, topics } = context;
      const pool = await openPostgres(context, {
        url: config.databaseUrl,
        max: config.databasePoolMax,
        ready: true,
      });
      const { idempotency } = openIdempotency(context, config);
      const { bus, codec } = await openKafka(context, allTopics(topics, config.partitions));
      const catalog = await openCatalog(context, {
        postgres: () => Promise.resolve(pool),
        module: config.catalogModule,
        factory: options.catalog,
      });
      createToolgateMetrics(context.registry, {
        isKnownTool: knownToolsOf(catalog.registry, clock),
        caseCounts: postgresCaseCounts(pool),
        consumerLag: openConsumerLag(context, { groupId: config.groupId, topics: [topics.dlq] }),
      });
      return createReconciler({
        subscriber: bus,
        publisher: bus,
        codec,
        topics,
        cases: new PostgresCaseStore(pool, clock),
        idempotency,
        tools: catalog.registry,
        clock,
        logger: context.logger.child({ component: 'reconciler' }),
        reconcilerId: config.reconcilerId,
        groupId: config.groupId,
        replyTopics: { [topics.results]: config.partitions.results },
        resultTtlMs: config.resultTtlMs,
        checkScheduleMs: config.checkScheduleMs,
        // Status checks read the call's full arguments back from the calls topic.
        originalCalls: kafkaOriginalCalls({
          kafka: kafkaClient(context, 'calls-reader'),
          codec,
          groupPrefix: `${config.groupId}-calls`,
        }),
        ...(config.checkTimeoutMs === undefined ? {} : { checkTimeoutMs: config.checkTimeoutMs }),
        pollIntervalMs: config.pollIntervalMs,
        checkConcurrency: config.checkConcurrency,
        partitionsConcurrently: config.partitionsConcurrently,
        shutdownGraceMs: config.shutdownGraceMs,
      });
    },
  });
}

/** `toolgate reconciler`, and main.ts: the reconciler process from the environment. */
export const RECONCILER_MAIN: ServiceMain<ReconcilerConfig> = {
  command: 'reconciler',
  summary: 'run the reconciler: dead letters into cases, settled by status checks',
  serviceName: 'toolgate-reconciler',
  load: () => loadReconcilerConfig(),
  catalogModule: (config) => config.catalogModule,
  create: (config, catalog) => createReconcilerService(config, { catalog }),
};
