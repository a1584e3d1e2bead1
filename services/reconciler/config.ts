import { hostname } from 'node:os';
import { z } from 'zod';
import { DEFAULT_CHECK_SCHEDULE_MS } from '../../libs/reconcile/check-schedule.js';
import { DEFAULT_CATALOG_MODULE } from '../executor/catalog.js';

const positiveInt = z.coerce.number().int().positive();
const nonEmpty = z.string().trim().min(1);

/**
 * The environment the reconciler reads. Topic prefix, partition counts, Redis key prefix, result TTL
 * and catalog module use the executor's variable names and defaults: the reconciler settles the
 * executors' idempotency records and resolves their tools, so both must agree.
 */
const EnvSchema = z.object({
  KAFKA_BROKERS: nonEmpty.transform((v, ctx) => {
    const brokers = v
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean);
    if (brokers.some((b) => !/^[^\s:/]+:\d{1,5}$/.test(b))) {
      ctx.addIssue({ code: 'custom', message: 'expected host:port[,host:port...]' });
      return z.NEVER;
    }
    return brokers;
  }),
  SCHEMA_REGISTRY_URL: z.url(),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'expected redis://… or rediss://…'),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'expected postgres://…'),
  DATABASE_POOL_MAX: positiveInt.max(100).default(8),
  TOOLGATE_TOPIC_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9._-]{1,200}$/, 'use [a-zA-Z0-9._-]')
    .default('toolgate'),
  RECONCILER_GROUP_ID: nonEmpty.default('toolgate-reconciler'),
  /** `producerId` of everything this instance publishes; unique per instance. */
  RECONCILER_ID: nonEmpty.max(200).optional(),
  CALLS_PARTITIONS: positiveInt.default(12),
  RESULTS_PARTITIONS: positiveInt.default(12),
  AUDIT_PARTITIONS: positiveInt.default(6),
  DLQ_PARTITIONS: positiveInt.default(3),
  REDIS_KEY_PREFIX: z.string().default('toolgate:'),
  TOOLGATE_CATALOG_MODULE: nonEmpty.default(DEFAULT_CATALOG_MODULE),
  RESULT_TTL_MS: positiveInt.default(7 * 24 * 3600 * 1000),
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
  KAFKA_SESSION_TIMEOUT_MS: positiveInt.default(30_000),
  KAFKA_REBALANCE_TIMEOUT_MS: positiveInt.default(60_000),
  KAFKA_HEARTBEAT_MS: positiveInt.default(3_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

type Env = z.infer<typeof EnvSchema>;

/** The reconciler's configuration, parsed once from the environment by {@link loadReconcilerConfig}. */
export interface ReconcilerConfig {
  readonly kafkaBrokers: readonly string[];
  readonly schemaRegistryUrl: string;
  readonly redisUrl: string;
  readonly databaseUrl: string;
  readonly databasePoolMax: number;
  readonly topicPrefix: string;
  readonly groupId: string;
  readonly reconcilerId: string;
  readonly partitions: {
    readonly calls: number;
    readonly results: number;
    readonly audit: number;
    readonly dlq: number;
  };
  readonly redisKeyPrefix: string;
  readonly catalogModule: string;
  readonly resultTtlMs: number;
  readonly checkScheduleMs: readonly number[];
  readonly checkTimeoutMs: number | undefined;
  readonly pollIntervalMs: number;
  readonly checkConcurrency: number;
  readonly partitionsConcurrently: number;
  readonly shutdownGraceMs: number;
  readonly kafka: {
    readonly sessionTimeoutMs: number;
    readonly rebalanceTimeoutMs: number;
    readonly heartbeatMs: number;
  };
  readonly logLevel: Env['LOG_LEVEL'];
}

/** Thrown with every problem of the environment listed, one per line, by variable name. */
export class ReconcilerConfigError extends Error {
  override readonly name = 'ReconcilerConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid reconciler configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * Parses the reconciler's environment once. Throws {@link ReconcilerConfigError} naming every bad or
 * missing variable; never echoes a value (URLs may carry passwords).
 */
export function loadReconcilerConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): ReconcilerConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ReconcilerConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`),
    );
  }
  const e = parsed.data;
  return {
    kafkaBrokers: e.KAFKA_BROKERS,
    schemaRegistryUrl: e.SCHEMA_REGISTRY_URL,
    redisUrl: e.REDIS_URL,
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.DATABASE_POOL_MAX,
    topicPrefix: e.TOOLGATE_TOPIC_PREFIX,
    groupId: e.RECONCILER_GROUP_ID,
    reconcilerId: e.RECONCILER_ID ?? `reconciler-${hostname()}-${process.pid}`,
    partitions: {
      calls: e.CALLS_PARTITIONS,
      results: e.RESULTS_PARTITIONS,
      audit: e.AUDIT_PARTITIONS,
      dlq: e.DLQ_PARTITIONS,
    },
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    catalogModule: e.TOOLGATE_CATALOG_MODULE,
    resultTtlMs: e.RESULT_TTL_MS,
    checkScheduleMs: e.CHECK_SCHEDULE_MS,
    checkTimeoutMs: e.CHECK_TIMEOUT_MS,
    pollIntervalMs: e.POLL_INTERVAL_MS,
    checkConcurrency: e.CHECK_CONCURRENCY,
    partitionsConcurrently: e.PARTITIONS_CONCURRENTLY,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    kafka: {
      sessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS,
      rebalanceTimeoutMs: e.KAFKA_REBALANCE_TIMEOUT_MS,
      heartbeatMs: e.KAFKA_HEARTBEAT_MS,
    },
    logLevel: e.LOG_LEVEL,
  };
}
