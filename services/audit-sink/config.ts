import { z } from 'zod';
import {
  DATABASE_POOL_MAX,
  DATABASE_URL,
  defaultInstanceId,
  nonEmpty,
  parseEnv,
  PARTITION_ENV,
  positiveInt,
  SERVICE_ENV,
  serviceSettings,
  ServiceConfigError,
  type ServiceSettings,
} from '../../libs/runtime/env.js';

/**
 * The environment the audit sink reads. Topic prefix, partition counts, Kafka timing, HTTP_PORT and
 * LOG_LEVEL are the variables every service shares (libs/runtime/env.ts): every service ensures
 * the same topics, and a count that disagrees is refused.
 */
const EnvSchema = z.object({
  ...SERVICE_ENV,
  DATABASE_URL,
  /**
   * The schema owner's connection, used only to apply pending migrations at start; DATABASE_URL can
   * then be a role with INSERT and SELECT on audit_records and SELECT on schema_migrations.
   */
  DATABASE_MIGRATION_URL: DATABASE_URL.optional(),
  DATABASE_POOL_MAX,
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
export interface AuditSinkConfig extends ServiceSettings {
  readonly databaseUrl: string;
  /** Where pending migrations are applied from (the owner role); undefined: through databaseUrl. */
  readonly databaseMigrationUrl: string | undefined;
  readonly databasePoolMax: number;
  readonly groupId: string;
  readonly sinkId: string;
  readonly partitionsConcurrently: number;
  readonly chainConcurrency: number;
  readonly partitions: { readonly audit: number; readonly dlq: number };
}

/** Thrown with every problem of the environment listed, one per line, by variable name. */
export class AuditSinkConfigError extends ServiceConfigError {
  override readonly name = 'AuditSinkConfigError';
  constructor(problems: readonly string[]) {
    super('audit-sink', problems);
  }
}

/**
 * Parses the audit sink's environment once. Throws {@link AuditSinkConfigError} naming every bad or
 * missing variable; never echoes a value (a database URL may carry a password).
 */
export function loadAuditSinkConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): AuditSinkConfig {
  const e = parseEnv(EnvSchema, env, (problems) => new AuditSinkConfigError(problems));
  return {
    ...serviceSettings(e),
    databaseUrl: e.DATABASE_URL,
    databaseMigrationUrl: e.DATABASE_MIGRATION_URL,
    databasePoolMax: e.DATABASE_POOL_MAX,
    groupId: e.AUDIT_SINK_GROUP_ID,
    sinkId: e.AUDIT_SINK_ID ?? defaultInstanceId('audit-sink'),
    partitionsConcurrently: e.PARTITIONS_CONCURRENTLY,
    chainConcurrency: e.CHAIN_CONCURRENCY,
    partitions: { audit: e.AUDIT_PARTITIONS, dlq: e.DLQ_PARTITIONS },
  };
}
