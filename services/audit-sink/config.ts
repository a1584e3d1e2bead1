import { z } from 'zod';
import {
  configErrorClass,
  DATABASE_URL,
  defaultInstanceId,
  nonEmpty,
  PARTITION_ENV,
  POSTGRES_ENV,
  positiveInt,
  postgresSettings,
  SERVICE_ENV,
  serviceSettings,
  type Environment,
  type PostgresSettings,
  type ServiceSettings,
} from '../../libs/runtime/env.js';

/**
 * The environment the audit sink reads. Topic prefix, partition counts, Kafka timing, HTTP_PORT and
 * LOG_LEVEL are the variables every service shares (libs/runtime/env.ts): every service ensures
 * the same topics, and a count that disagrees is refused.
 */
const EnvSchema = z.object({
  ...SERVICE_ENV,
  ...POSTGRES_ENV,
  /**
   * The schema owner's connection, used only to apply pending migrations at start; DATABASE_URL can
   * then be a role with INSERT and SELECT on audit_records and SELECT on schema_migrations.
   */
  DATABASE_MIGRATION_URL: DATABASE_URL.optional(),
  AUDIT_SINK_GROUP_ID: nonEmpty.default('toolgate-audit-sink'),
  /** `producerId` of the dead letters this instance publishes; unique per instance is clearest. */
  AUDIT_SINK_ID: nonEmpty.max(200).optional(),
  PARTITIONS_CONCURRENTLY: positiveInt.max(1000).default(4),
  /** Chains (tenants) of one batch appended at once; keep it below DATABASE_POOL_MAX. */
  CHAIN_CONCURRENCY: positiveInt.max(100).default(4),
  AUDIT_PARTITIONS: PARTITION_ENV.AUDIT_PARTITIONS,
  DLQ_PARTITIONS: PARTITION_ENV.DLQ_PARTITIONS,
});

/** The audit sink's configuration, parsed once from the environment by {@link loadAuditSinkConfig}. */
export interface AuditSinkConfig extends ServiceSettings, PostgresSettings {
  /** Where pending migrations are applied from (the owner role); undefined: through databaseUrl. */
  readonly databaseMigrationUrl: string | undefined;
  readonly groupId: string;
  readonly sinkId: string;
  readonly partitionsConcurrently: number;
  readonly chainConcurrency: number;
  readonly partitions: { readonly audit: number; readonly dlq: number };
}

/** Thrown with every problem of the environment listed, one per line, by variable name. */
export class AuditSinkConfigError extends configErrorClass('audit-sink', 'AuditSinkConfigError') {}

/**
 * Parses the audit sink's environment once. Throws {@link AuditSinkConfigError} naming every bad or
 * missing variable; never echoes a value (a database URL may carry a password).
 */
export function loadAuditSinkConfig(env: Environment = process.env): AuditSinkConfig {
  const e = AuditSinkConfigError.parse(EnvSchema, env);
  return {
    ...serviceSettings(e),
    ...postgresSettings(e),
    databaseMigrationUrl: e.DATABASE_MIGRATION_URL,
    groupId: e.AUDIT_SINK_GROUP_ID,
    sinkId: e.AUDIT_SINK_ID ?? defaultInstanceId('audit-sink'),
    partitionsConcurrently: e.PARTITIONS_CONCURRENTLY,
    chainConcurrency: e.CHAIN_CONCURRENCY,
    partitions: { audit: e.AUDIT_PARTITIONS, dlq: e.DLQ_PARTITIONS },
  };
}
