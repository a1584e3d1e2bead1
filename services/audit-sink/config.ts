import { hostname } from 'node:os';
import { z } from 'zod';

const positiveInt = z.coerce.number().int().positive();
const nonEmpty = z.string().trim().min(1);

/**
 * The environment the audit sink reads. Topic prefix and partition counts use the executor's variable
 * names and defaults: every service ensures the same topics, and a count that disagrees is refused.
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
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'expected postgres://…'),
  DATABASE_POOL_MAX: positiveInt.max(100).default(8),
  TOOLGATE_TOPIC_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9._-]{1,200}$/, 'use [a-zA-Z0-9._-]')
    .default('toolgate'),
  AUDIT_SINK_GROUP_ID: nonEmpty.default('toolgate-audit-sink'),
  /** `producerId` of the dead letters this instance publishes; unique per instance is clearest. */
  AUDIT_SINK_ID: nonEmpty.max(200).optional(),
  PARTITIONS_CONCURRENTLY: positiveInt.max(1000).default(4),
  /** Chains (tenants) of one batch appended at once; keep it below DATABASE_POOL_MAX. */
  CHAIN_CONCURRENCY: positiveInt.max(100).default(4),
  AUDIT_PARTITIONS: positiveInt.default(6),
  DLQ_PARTITIONS: positiveInt.default(3),
  KAFKA_SESSION_TIMEOUT_MS: positiveInt.default(30_000),
  KAFKA_REBALANCE_TIMEOUT_MS: positiveInt.default(60_000),
  KAFKA_HEARTBEAT_MS: positiveInt.default(3_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

type Env = z.infer<typeof EnvSchema>;

/** The audit sink's configuration, parsed once from the environment by {@link loadAuditSinkConfig}. */
export interface AuditSinkConfig {
  readonly kafkaBrokers: readonly string[];
  readonly schemaRegistryUrl: string;
  readonly databaseUrl: string;
  readonly databasePoolMax: number;
  readonly topicPrefix: string;
  readonly groupId: string;
  readonly sinkId: string;
  readonly partitionsConcurrently: number;
  readonly chainConcurrency: number;
  readonly partitions: { readonly audit: number; readonly dlq: number };
  readonly kafka: {
    readonly sessionTimeoutMs: number;
    readonly rebalanceTimeoutMs: number;
    readonly heartbeatMs: number;
  };
  readonly logLevel: Env['LOG_LEVEL'];
}

/** Thrown with every problem of the environment listed, one per line, by variable name. */
export class AuditSinkConfigError extends Error {
  override readonly name = 'AuditSinkConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid audit-sink configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * Parses the audit sink's environment once. Throws {@link AuditSinkConfigError} naming every bad or
 * missing variable; never echoes a value (a database URL may carry a password).
 */
export function loadAuditSinkConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): AuditSinkConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new AuditSinkConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`),
    );
  }
  const e = parsed.data;
  return {
    kafkaBrokers: e.KAFKA_BROKERS,
    schemaRegistryUrl: e.SCHEMA_REGISTRY_URL,
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.DATABASE_POOL_MAX,
    topicPrefix: e.TOOLGATE_TOPIC_PREFIX,
    groupId: e.AUDIT_SINK_GROUP_ID,
    sinkId: e.AUDIT_SINK_ID ?? `audit-sink-${hostname()}-${process.pid}`,
    partitionsConcurrently: e.PARTITIONS_CONCURRENTLY,
    chainConcurrency: e.CHAIN_CONCURRENCY,
    partitions: { audit: e.AUDIT_PARTITIONS, dlq: e.DLQ_PARTITIONS },
    kafka: {
      sessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS,
      rebalanceTimeoutMs: e.KAFKA_REBALANCE_TIMEOUT_MS,
      heartbeatMs: e.KAFKA_HEARTBEAT_MS,
    },
    logLevel: e.LOG_LEVEL,
  };
}
