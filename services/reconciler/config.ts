import { z } from 'zod';
import { DEFAULT_CHECK_SCHEDULE_MS } from '../../libs/reconcile/check-schedule.js';
import {
  configErrorClass,
  defaultInstanceId,
  EXECUTION_ENV,
  executionSettings,
  nonEmpty,
  POSTGRES_ENV,
  positiveInt,
  postgresSettings,
  type Environment,
  type ExecutionSettings,
  type PostgresSettings,
} from '../../libs/runtime/env.js';

/**
 * The environment the reconciler reads. Topic prefix, partition counts, Redis key prefix, result TTL
 * and catalog module use the executor's variable names and defaults (libs/runtime/env.ts): the
 * reconciler settles the executors' idempotency records and resolves their tools, so both must
 * agree.
 */
const EnvSchema = z.object({
  ...EXECUTION_ENV,
  ...POSTGRES_ENV,
  RECONCILER_GROUP_ID: nonEmpty.default('toolgate-reconciler'),
  /** `producerId` of everything this instance publishes; unique per instance. */
  RECONCILER_ID: nonEmpty.max(200).optional(),
  /** Waits before each status check of a round, ms, comma-separated (default 1000,2000,4000,8000,16000). */
  CHECK_SCHEDULE_MS: z
    .string()
    .default(DEFAULT_CHECK_SCHEDULE_MS.join(','))
    .transform((v, ctx) => {
      const waits = v.split(',').map((w) => Number(w.trim()));
      if (waits.length === 0 || waits.some((w) => !Number.isSafeInteger(w) || w <= 0)) {
        ctx.addIssue({ code: 'custom', message: 'expected whole milliseconds > 0, comma-separated' });
        return z.NEVER;
      }
      return waits;
    }),
  /** Limit on one status check; default: each tool's own timeout. */
  CHECK_TIMEOUT_MS: positiveInt.optional(),
  POLL_INTERVAL_MS: positiveInt.default(500),
  CHECK_CONCURRENCY: positiveInt.max(1000).default(8),
  PARTITIONS_CONCURRENTLY: positiveInt.max(1000).default(4),
  SHUTDOWN_GRACE_MS: positiveInt.default(10_000),
});

/** The reconciler's configuration, parsed once from the environment by {@link loadReconcilerConfig}. */
export interface ReconcilerConfig extends ExecutionSettings, PostgresSettings {
  readonly groupId: string;
  readonly reconcilerId: string;
  readonly checkScheduleMs: readonly number[];
  readonly checkTimeoutMs: number | undefined;
  readonly pollIntervalMs: number;
  readonly checkConcurrency: number;
  readonly partitionsConcurrently: number;
  readonly shutdownGraceMs: number;
}

/** Thrown with every problem of the environment listed, one per line, by variable name. */
export class ReconcilerConfigError extends configErrorClass('reconciler', 'ReconcilerConfigError') {}

/**
 * Parses the reconciler's environment once. Throws {@link ReconcilerConfigError} naming every bad or
 * missing variable; never echoes a value (URLs may carry passwords).
 */
export function loadReconcilerConfig(env: Environment = process.env): ReconcilerConfig {
  const e = ReconcilerConfigError.parse(EnvSchema, env);
  return {
    ...executionSettings(e),
    ...postgresSettings(e),
    groupId: e.RECONCILER_GROUP_ID,
    reconcilerId: e.RECONCILER_ID ?? defaultInstanceId('reconciler'),
    checkScheduleMs: e.CHECK_SCHEDULE_MS,
    checkTimeoutMs: e.CHECK_TIMEOUT_MS,
    pollIntervalMs: e.POLL_INTERVAL_MS,
    checkConcurrency: e.CHECK_CONCURRENCY,
    partitionsConcurrently: e.PARTITIONS_CONCURRENTLY,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
  };
}
