import { PostgresCaseStore } from '../../libs/adapters/postgres/case-store.js';
import { createToolgateMetrics } from '../../libs/observability/metrics.js';
import { knownToolsOf } from '../../libs/observability/pipeline-metrics.js';
import { postgresCaseCounts } from '../../libs/observability/postgres-case-counts.js';
import {
  allTopics,
  kafkaClient,
  openConsumerLag,
  openSettlementClients,
} from '../../libs/runtime/clients.js';
import {
  createConfiguredService,
  type CatalogServiceOptions,
  type Service,
  type ServiceMain,
} from '../../libs/runtime/service.js';
import { loadReconcilerConfig, type ReconcilerConfig } from './config.js';
import { createReconciler } from './reconciler.js';
import { kafkaOriginalCalls } from '../../libs/reconcile/original-call.js';
import { resubmissionSigner } from './resubmission-signer.js';

/** What a caller may supply instead of what the configuration names. */
export type ReconcilerServiceOptions = CatalogServiceOptions;

/**
 * The reconciler process from its configuration (nothing opens before `start()`): Kafka (dead
 * letters in; results and audit records out), the schema registry, Postgres (cases; migrated at
 * start), the executors' Redis idempotency store, and the executors' tool catalog (loaded like the
 * executor loads it), with toolgate's metrics in the process registry — unfinished cases per state
 * (`postgresCaseCounts`) and the group's lag on the dead-letter topic, both read at scrape time.
 * /readyz adds "Postgres answers" and "Redis answers" to the lifecycle check (see `createService`).
 * Stopping: no new dead letter or check starts, checks in progress finish, deliveries get
 * SHUTDOWN_GRACE_MS. With RECONCILER_SIGNING_KEY_FILE set, UNRESOLVED calls of tools that forward
 * their idempotency key are re-submitted automatically (at most AUTO_REDRIVE_MAX times per case).
 */
export function createReconcilerService(
  config: ReconcilerConfig,
  options: ReconcilerServiceOptions = {},
): Service {
  return createConfiguredService('reconciler', config, 'reconcilerId', options, async (context) => {
    const { clock, topics } = context;
    const { pool, idempotency, bus, codec, catalog } = await openSettlementClients(
      context,
      config,
      allTopics(topics, config.partitions),
      options.catalog,
    );
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
      autoRedriveMax: config.autoRedriveMax,
      resubmitGraceMs: config.resubmitGraceMs,
      // Automatic re-submissions need a principal assertion the executors accept.
      ...(config.resubmissionSigning === undefined
        ? {}
        : {
            resubmissionAssertion: resubmissionSigner(config.resubmissionSigning, config.reconcilerId, clock),
          }),
    });
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
