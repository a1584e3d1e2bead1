import { PostgresAuditStore } from '../../libs/adapters/postgres/audit-store.js';
import { createToolgateMetrics } from '../../libs/observability/metrics.js';
import { openConsumerLag, openKafka, openServicePostgres } from '../../libs/runtime/clients.js';
import {
  createConfiguredService,
  type Service,
  type ServiceMain,
  type ServiceOptions,
} from '../../libs/runtime/service.js';
import { createAuditSink } from './audit-sink.js';
import { loadAuditSinkConfig, type AuditSinkConfig } from './config.js';

/** What a caller may supply instead of the defaults. */
export type AuditSinkServiceOptions = ServiceOptions;

/**
 * The audit-sink process from its configuration (nothing opens before `start()`): Kafka (audit
 * topic in, dead letters out), the schema registry, and the Postgres audit store (its schema
 * version checked without DDL at start, pending migrations applied through DATABASE_MIGRATION_URL —
 * the owner role — when set, else through DATABASE_URL), with toolgate's metrics in the process registry — dead letters it publishes by reason,
 * and the group's lag on the audit topic read at scrape time. /readyz adds "Postgres answers" to
 * the lifecycle check (see `createService`). Stopping drains it: running batches finish or give up
 * their wait, stored batches commit, the member leaves, then connections close.
 */
export function createAuditSinkService(
  config: AuditSinkConfig,
  options: AuditSinkServiceOptions = {},
): Service {
  return createConfiguredService('audit-sink', config, 'sinkId', options, async (context) => {
    const { topics } = context;
    const pool = await openServicePostgres(context, config);
    const { bus, codec } = await openKafka(context, [
      { topic: topics.audit, partitions: config.partitions.audit },
      { topic: topics.dlq, partitions: config.partitions.dlq },
    ]);
    const metrics = createToolgateMetrics(context.registry, {
      // The sink records no per-tool series; every name would count as "unknown".
      isKnownTool: () => false,
      consumerLag: openConsumerLag(context, { groupId: config.groupId, topics: [topics.audit] }),
    });
    return createAuditSink({
      subscriber: bus,
      publisher: bus,
      codec,
      topics,
      store: new PostgresAuditStore(pool, { chainConcurrency: config.chainConcurrency }),
      logger: context.logger.child({ component: 'audit-sink' }),
      groupId: config.groupId,
      producerId: config.sinkId,
      clock: context.clock,
      partitionsConcurrently: config.partitionsConcurrently,
      deadLettered: (reason) => metrics.observeDeadLetter(reason),
    });
  });
}

/** `toolgate audit-sink`, and main.ts: the audit-sink process from the environment. */
export const AUDIT_SINK_MAIN: ServiceMain<AuditSinkConfig> = {
  command: 'audit-sink',
  summary: 'run the audit sink: the audit topic into the append-only Postgres log',
  serviceName: 'toolgate-audit-sink',
  load: () => loadAuditSinkConfig(),
  create: (config) => createAuditSinkService(config),
};
