import { z } from 'zod';

/**
 * The environment variables toolgate's services share, with one name, one parser and one default
 * each (the executor's): every service ensures the same topics, so a partition count or prefix
 * that disagrees between services would be refused at start-up, and the reconciler settles the
 * executors' idempotency records, so its Redis prefix and result TTL must match theirs. Each
 * service's config.ts composes its schema from these and adds its own variables.
 */

export const positiveInt = z.coerce.number().int().positive();
export const nonEmpty = z.string().trim().min(1);

/** The log levels a service accepts (pino's). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Read by every service: the bus, the registry, topic names, Kafka timing, the endpoint and logs. */
export const SERVICE_ENV = {
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
  TOOLGATE_TOPIC_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9._-]{1,200}$/, 'use [a-zA-Z0-9._-]')
    .default('toolgate'),
  KAFKA_SESSION_TIMEOUT_MS: positiveInt.default(30_000),
  KAFKA_REBALANCE_TIMEOUT_MS: positiveInt.default(60_000),
  KAFKA_HEARTBEAT_MS: positiveInt.default(3_000),
  /** Port of /metrics, /healthz and /readyz; 0 picks a free one. */
  HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
};

/** Connection strings, for the services that use the store. */
export const REDIS_URL = z
  .string()
  .regex(
    /^(rediss?|redis-cluster):\/\//,
    'expected redis://…, rediss://… or redis-cluster://host:port,host:port,… (a Redis Cluster)',
  );
export const DATABASE_URL = z.string().regex(/^postgres(ql)?:\/\//, 'expected postgres://…');
/** Connections a service's Postgres pool may hold. */
export const DATABASE_POOL_MAX = positiveInt.max(100).default(8);

/** Partition counts the topics are created with (an existing topic with another count is refused). */
export const PARTITION_ENV = {
  CALLS_PARTITIONS: positiveInt.default(12),
  RESULTS_PARTITIONS: positiveInt.default(12),
  AUDIT_PARTITIONS: positiveInt.default(6),
  DLQ_PARTITIONS: positiveInt.default(3),
};

/** The partition counts of the four topics, by event kind. */
export interface PartitionCounts {
  readonly calls: number;
  readonly results: number;
  readonly audit: number;
  readonly dlq: number;
}

/** {@link PartitionCounts} from an environment parsed with {@link PARTITION_ENV}. */
export function partitionCounts(e: z.infer<z.ZodObject<typeof PARTITION_ENV>>): PartitionCounts {
  return {
    calls: e.CALLS_PARTITIONS,
    results: e.RESULTS_PARTITIONS,
    audit: e.AUDIT_PARTITIONS,
    dlq: e.DLQ_PARTITIONS,
  };
}

/** What the executor and the reconciler must agree on about the executors' idempotency records. */
export const IDEMPOTENCY_ENV = {
  REDIS_KEY_PREFIX: z.string().default('toolgate:'),
  RESULT_TTL_MS: positiveInt.default(7 * 24 * 3600 * 1000),
  /** Replicas that must have each idempotency write before it counts (Redis WAIT); 0: none. */
  REDIS_REPLICA_ACKS: z.coerce.number().int().min(0).max(5).default(0),
  REDIS_REPLICA_ACK_TIMEOUT_MS: positiveInt.default(500),
};

/** The idempotency store's `replicaAcks` setting from {@link IDEMPOTENCY_ENV}; undefined when 0. */
export function replicaAcksOf(e: {
  readonly REDIS_REPLICA_ACKS: number;
  readonly REDIS_REPLICA_ACK_TIMEOUT_MS: number;
}): { readonly replicas: number; readonly timeoutMs: number } | undefined {
  return e.REDIS_REPLICA_ACKS === 0
    ? undefined
    : { replicas: e.REDIS_REPLICA_ACKS, timeoutMs: e.REDIS_REPLICA_ACK_TIMEOUT_MS };
}

/** The part of every service's configuration that {@link SERVICE_ENV} holds. */
export interface ServiceSettings {
  readonly kafkaBrokers: readonly string[];
  readonly schemaRegistryUrl: string;
  readonly topicPrefix: string;
  readonly kafka: {
    readonly sessionTimeoutMs: number;
    readonly rebalanceTimeoutMs: number;
    readonly heartbeatMs: number;
  };
  readonly httpPort: number;
  readonly logLevel: LogLevel;
}

type ServiceEnv = z.infer<z.ZodObject<typeof SERVICE_ENV>>;

/** {@link ServiceSettings} from a parsed environment. */
export function serviceSettings(e: ServiceEnv): ServiceSettings {
  return {
    kafkaBrokers: e.KAFKA_BROKERS,
    schemaRegistryUrl: e.SCHEMA_REGISTRY_URL,
    topicPrefix: e.TOOLGATE_TOPIC_PREFIX,
    kafka: {
      sessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS,
      rebalanceTimeoutMs: e.KAFKA_REBALANCE_TIMEOUT_MS,
      heartbeatMs: e.KAFKA_HEARTBEAT_MS,
    },
    httpPort: e.HTTP_PORT,
    logLevel: e.LOG_LEVEL,
  };
}

/** A service's bad environment: every problem listed, one per line, by variable name. */
export class ServiceConfigError extends Error {
  constructor(
    service: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid ${service} configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * Parses `env` with `schema`, or throws `fail(problems)` with one line per problem, named by
 * variable ("required, but not set" for a missing one). Never echoes a value: URLs may carry
 * passwords.
 */
export function parseEnv<T>(
  schema: z.ZodType<T>,
  env: Readonly<Record<string, string | undefined>>,
  fail: (problems: readonly string[]) => Error,
): T {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw fail(
    parsed.error.issues.map((issue) => {
      const unset = issue.code === 'invalid_type' && issue.message.endsWith('received undefined');
      return `${issue.path.join('.') || '(environment)'}: ${unset ? 'required, but not set' : issue.message}`;
    }),
  );
}
