import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { JSONWebKeySet } from 'jose';
import { z } from 'zod';

/**
 * The environment variables toolgate's services share, with one name, one parser and one default
 * each: every service ensures the same topics, so a partition count or prefix that disagrees
 * between services would be refused at start-up, and the reconciler and the ops console settle the
 * executors' idempotency records, so their Redis prefix and result TTL must match the executors'.
 * Each service's config.ts composes its schema from these and adds its own variables; the readers
 * below turn the shared parts of a parsed environment into configuration, so each is written once.
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

/** What {@link IDEMPOTENCY_ENV} and REDIS_URL configure: the executors' idempotency records in Redis. */
export interface IdempotencySettings {
  readonly redisUrl: string;
  readonly redisKeyPrefix: string;
  /** Replicas each idempotency write must reach (REDIS_REPLICA_ACKS); undefined: no waiting. */
  readonly redisReplicaAcks: { readonly replicas: number; readonly timeoutMs: number } | undefined;
  readonly resultTtlMs: number;
}

/** {@link IdempotencySettings} from an environment parsed with {@link IDEMPOTENCY_ENV} and REDIS_URL. */
export function idempotencySettings(
  e: z.infer<z.ZodObject<typeof IDEMPOTENCY_ENV>> & { readonly REDIS_URL: string },
): IdempotencySettings {
  return {
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    redisReplicaAcks: replicaAcksOf(e),
    resultTtlMs: e.RESULT_TTL_MS,
  };
}

/** The idempotency store's `replicaAcks` setting from {@link IDEMPOTENCY_ENV}; undefined when 0. */
export function replicaAcksOf(e: {
  readonly REDIS_REPLICA_ACKS: number;
  readonly REDIS_REPLICA_ACK_TIMEOUT_MS: number;
}): { readonly replicas: number; readonly timeoutMs: number } | undefined {
  return e.REDIS_REPLICA_ACKS === 0
    ? undefined
    : { replicas: e.REDIS_REPLICA_ACKS, timeoutMs: e.REDIS_REPLICA_ACK_TIMEOUT_MS };
}

/** The Postgres database of a service that keeps its own state there. */
export const POSTGRES_ENV = { DATABASE_URL, DATABASE_POOL_MAX };

/** What {@link POSTGRES_ENV} configures. */
export interface PostgresSettings {
  readonly databaseUrl: string;
  readonly databasePoolMax: number;
}

/** {@link PostgresSettings} from an environment parsed with {@link POSTGRES_ENV}. */
export function postgresSettings(e: z.infer<z.ZodObject<typeof POSTGRES_ENV>>): PostgresSettings {
  return { databaseUrl: e.DATABASE_URL, databasePoolMax: e.DATABASE_POOL_MAX };
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

/**
 * What the executor and the services that settle its calls (the reconciler, the ops console) read
 * alike, and must agree on: the variables every service shares, the four topics' partition counts,
 * the executors' idempotency records in Redis, and the tools' catalog module
 * (TOOLGATE_CATALOG_MODULE, a path relative to the working directory or a package; unset: the store
 * catalog).
 */
export const EXECUTION_ENV = {
  ...SERVICE_ENV,
  ...PARTITION_ENV,
  ...IDEMPOTENCY_ENV,
  REDIS_URL,
  TOOLGATE_CATALOG_MODULE: nonEmpty.optional(),
};

/** What {@link EXECUTION_ENV} configures. */
export interface ExecutionSettings extends ServiceSettings, IdempotencySettings {
  readonly partitions: PartitionCounts;
  /** Undefined: the store catalog. */
  readonly catalogModule: string | undefined;
}

/** {@link ExecutionSettings} from an environment parsed with {@link EXECUTION_ENV}. */
export function executionSettings(e: z.infer<z.ZodObject<typeof EXECUTION_ENV>>): ExecutionSettings {
  return {
    ...serviceSettings(e),
    ...idempotencySettings(e),
    partitions: partitionCounts(e),
    catalogModule: e.TOOLGATE_CATALOG_MODULE,
  };
}

/** The environment a configuration loader reads: `process.env` unless a caller passes its own. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** A service's bad environment: every problem listed, one per line, by variable name. */
export class ServiceConfigError extends Error {
  constructor(
    service: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid ${service} configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }

  /**
   * Parses `env` with `schema` as {@link parseEnv} does, throwing an error of the class it is called
   * on (a service's own, made by {@link configErrorClass}) that lists every problem.
   */
  static parse<T>(
    this: new (problems: readonly string[]) => ServiceConfigError,
    schema: z.ZodType<T>,
    env: Environment,
  ): T {
    return parseEnv(schema, env, (problems) => new this(problems));
  }
}

/**
 * The base of one service's configuration error: a {@link ServiceConfigError} whose message begins
 * `invalid <service> configuration:` and whose `name` is `name`. A service declares its own class
 * with it (`class ExecutorConfigError extends configErrorClass('executor', 'ExecutorConfigError')
 * {}`), so callers can tell its errors apart with `instanceof`.
 */
export function configErrorClass(service: string, name: string) {
  return class extends ServiceConfigError {
    override readonly name = name;
    constructor(problems: readonly string[]) {
      super(service, problems);
    }
  };
}

/**
 * Parses `env` with `schema`, or throws `fail(problems)` with one line per problem, named by
 * variable ("required, but not set" for a missing one). Never echoes a value: URLs may carry
 * passwords.
 */
export function parseEnv<T>(
  schema: z.ZodType<T>,
  env: Environment,
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

/**
 * An instance's id when its variable (EXECUTOR_ID, RECONCILER_ID, …) is not set:
 * `<service>-<host name>-<pid>`, unique per process on a host.
 */
export function defaultInstanceId(service: string): string {
  return `${service}-${hostname()}-${process.pid}`;
}

/** Reads a file a variable names (a JWKS, a secret) as UTF-8 text: the default every config loader injects. */
export function readTextFile(path: string): string {
  return readFileSync(path, 'utf8');
}

const JwksSchema = z.object({
  keys: z
    .array(z.looseObject({ kty: z.string(), kid: z.string().optional() }))
    .min(1, 'needs at least one key'),
});

/** A JWKS given in the environment: inline JSON in one variable, or the path of a file in the other. */
export interface JwksVariables {
  /** The inline variable's name and value, e.g. PRINCIPAL_JWKS. */
  readonly inline: readonly [name: string, value: string | undefined];
  /** The file variable's name and value, e.g. PRINCIPAL_JWKS_FILE. */
  readonly file: readonly [name: string, value: string | undefined];
}

/**
 * The key set one of the two {@link JwksVariables} gives (blank counts as unset), read with
 * `readFile` when it is the file: undefined when neither is set (each service decides whether that
 * is allowed). Throws `fail(problems)`, naming the variable, when both are set, when the file cannot
 * be read (by error code), when the text is not JSON, or when it is not a key set with at least one
 * key. Never echoes the value.
 */
export function jwksFromEnv(
  vars: JwksVariables,
  readFile: (path: string) => string,
  fail: (problems: readonly string[]) => Error,
): JSONWebKeySet | undefined {
  const [inlineName, inlineValue] = vars.inline;
  const [fileName, fileValue] = vars.file;
  const inline = inlineValue?.trim() || undefined;
  const file = fileValue?.trim() || undefined;
  if (inline !== undefined && file !== undefined) {
    throw fail([`${inlineName} / ${fileName}: both are set; set exactly one of the two`]);
  }
  if (inline === undefined && file === undefined) return undefined;
  const name = inline !== undefined ? inlineName : fileName;
  let text: string;
  try {
    text = inline ?? readFile(file!);
  } catch (err) {
    throw fail([`${name}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw fail([`${name}: not valid JSON`]);
  }
  const jwks = JwksSchema.safeParse(json);
  if (!jwks.success) {
    throw fail(jwks.error.issues.map((issue) => `${name}: ${issue.path.join('.')} ${issue.message}`));
  }
  return jwks.data;
}
