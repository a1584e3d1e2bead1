import { PostgresAuditStore } from '../../libs/adapters/postgres/audit-store.js';
import { topicNames } from '../../libs/events/topics.js';
import { createToolgateMetrics } from '../../libs/observability/metrics.js';
import { openConsumerLag, openKafka, openPostgres } from '../executor/service-clients.js';
import { createService, type Service, type ServiceOptions } from '../executor/service-runtime.js';
import { createAuditSink } from './audit-sink.js';
import type { AuditSinkConfig } from './config.js';

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
  const topics = topicNames(config.topicPrefix);
  return createService({
    name: 'audit-sink',
    settings: config,
    base: { sinkId: config.sinkId },
    logger: options.logger,
    async open(context) {
      const pool = await openPostgres(context, {
        url: config.databaseUrl,
        max: config.databasePoolMax,
        ready: true,
        migrationUrl: config.databaseMigrationUrl,
      });
      const { bus, codec } = await openKafka(context, {
        settings: config,
        clientId: config.sinkId,
        topics,
        ensure: [
          { topic: topics.audit, partitions: config.partitions.audit },
          { topic: topics.dlq, partitions: config.partitions.dlq },
        ],
      });
      const metrics = createToolgateMetrics(context.registry, {
        // The sink records no per-tool series; every name would count as "unknown".
        isKnownTool: () => false,
        consumerLag: openConsumerLag(context, {
          settings: config,
          clientId: config.sinkId,
          groupId: config.groupId,
          topics: [topics.audit],
        }),
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
    },
  });
}
