import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { JSONWebKeySet } from 'jose';
import { z } from 'zod';
import { DEFAULT_CATALOG_MODULE } from './catalog.js';

const positiveInt = z.coerce.number().int().positive();
const nonEmpty = z.string().trim().min(1);

/** The environment the executor reads, with defaults; each variable is documented where it is used. */
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
  TOOLGATE_TOPIC_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9._-]{1,200}$/, 'use [a-zA-Z0-9._-]')
    .default('toolgate'),
  TOOLGATE_GROUP_ID: nonEmpty.default('toolgate-executor'),
  /** Also the idempotency-lease owner: must be unique per running instance. */
  EXECUTOR_ID: nonEmpty.max(200).optional(),
  MAX_CONCURRENCY: positiveInt.max(1000).default(16),
  PARTITIONS_CONCURRENTLY: positiveInt.max(1000).default(4),
  CALLS_PARTITIONS: positiveInt.default(12),
  RESULTS_PARTITIONS: positiveInt.default(12),
  AUDIT_PARTITIONS: positiveInt.default(6),
  DLQ_PARTITIONS: positiveInt.default(3),
  /** Trusted principal-signing keys, as a JWKS JSON text… */
  PRINCIPAL_JWKS: z.string().optional(),
  /** …or the path of a file holding it. Exactly one of the two. */
  PRINCIPAL_JWKS_FILE: z.string().optional(),
  PRINCIPAL_ISSUER: nonEmpty,
  PRINCIPAL_AUDIENCE: nonEmpty,
  PRINCIPAL_MAX_AGE_SEC: positiveInt.optional(),
  REDIS_KEY_PREFIX: z.string().default('toolgate:'),
  TOOLGATE_CATALOG_MODULE: nonEmpty.default(DEFAULT_CATALOG_MODULE),
  RESULT_TTL_MS: positiveInt.default(7 * 24 * 3600 * 1000),
  LEASE_MARGIN_MS: positiveInt.default(5_000),
  BREAKER_ERROR_PERCENT: z.coerce.number().min(1).max(100).default(50),
  BREAKER_VOLUME: positiveInt.default(20),
  BREAKER_RESET_MS: positiveInt.default(30_000),
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(30_000),
  KAFKA_SESSION_TIMEOUT_MS: positiveInt.default(30_000),
  KAFKA_REBALANCE_TIMEOUT_MS: positiveInt.default(60_000),
  KAFKA_HEARTBEAT_MS: positiveInt.default(3_000),
  /** Port of /metrics, /healthz and /readyz; 0 picks a free one. */
  HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

type Env = z.infer<typeof EnvSchema>;

/** The executor's configuration, parsed once from the environment by {@link loadExecutorConfig}. */
export interface ExecutorConfig {
  readonly kafkaBrokers: readonly string[];
  readonly schemaRegistryUrl: string;
  readonly redisUrl: string;
  readonly databaseUrl: string;
  readonly topicPrefix: string;
  readonly groupId: string;
  readonly executorId: string;
  readonly maxConcurrency: number;
  readonly partitionsConcurrently: number;
  readonly partitions: {
    readonly calls: number;
    readonly results: number;
    readonly audit: number;
    readonly dlq: number;
  };
  readonly principal: {
    readonly jwks: JSONWebKeySet;
    readonly issuer: string;
    readonly audience: string;
    readonly maxTokenAgeSec?: number;
  };
  readonly redisKeyPrefix: string;
  readonly catalogModule: string;
  readonly resultTtlMs: number;
  readonly leaseMarginMs: number;
  readonly breaker: { readonly errorPercent: number; readonly volume: number; readonly resetMs: number };
  readonly shutdownTimeoutMs: number;
  readonly kafka: {
    readonly sessionTimeoutMs: number;
    readonly rebalanceTimeoutMs: number;
    readonly heartbeatMs: number;
  };
  readonly httpPort: number;
  readonly logLevel: Env['LOG_LEVEL'];
}

/** Thrown with every problem of the environment listed, one per line, by variable name. */
export class ExecutorConfigError extends Error {
  override readonly name = 'ExecutorConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid executor configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * Parses the executor's environment once. `readFile` reads PRINCIPAL_JWKS_FILE (injected for tests).
 * Throws {@link ExecutorConfigError} naming every bad or missing variable; never echoes a value
 * (a URL may carry a password).
 */
export function loadExecutorConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): ExecutorConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ExecutorConfigError(
      parsed.error.issues.map((issue) => {
        const unset = issue.code === 'invalid_type' && issue.message.endsWith('received undefined');
        return `${issue.path.join('.') || '(environment)'}: ${unset ? 'required, but not set' : issue.message}`;
      }),
    );
  }
  const e = parsed.data;
  const jwks = principalKeys(e, readFile);
  return {
    kafkaBrokers: e.KAFKA_BROKERS,
    schemaRegistryUrl: e.SCHEMA_REGISTRY_URL,
    redisUrl: e.REDIS_URL,
    databaseUrl: e.DATABASE_URL,
    topicPrefix: e.TOOLGATE_TOPIC_PREFIX,
    groupId: e.TOOLGATE_GROUP_ID,
    executorId: e.EXECUTOR_ID ?? `executor-${hostname()}-${process.pid}`,
    maxConcurrency: e.MAX_CONCURRENCY,
    partitionsConcurrently: e.PARTITIONS_CONCURRENTLY,
    partitions: {
      calls: e.CALLS_PARTITIONS,
      results: e.RESULTS_PARTITIONS,
      audit: e.AUDIT_PARTITIONS,
      dlq: e.DLQ_PARTITIONS,
    },
    principal: {
      jwks,
      issuer: e.PRINCIPAL_ISSUER,
      audience: e.PRINCIPAL_AUDIENCE,
      ...(e.PRINCIPAL_MAX_AGE_SEC === undefined ? {} : { maxTokenAgeSec: e.PRINCIPAL_MAX_AGE_SEC }),
    },
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    catalogModule: e.TOOLGATE_CATALOG_MODULE,
    resultTtlMs: e.RESULT_TTL_MS,
    leaseMarginMs: e.LEASE_MARGIN_MS,
    breaker: { errorPercent: e.BREAKER_ERROR_PERCENT, volume: e.BREAKER_VOLUME, resetMs: e.BREAKER_RESET_MS },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    kafka: {
      sessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS,
      rebalanceTimeoutMs: e.KAFKA_REBALANCE_TIMEOUT_MS,
      heartbeatMs: e.KAFKA_HEARTBEAT_MS,
    },
    httpPort: e.HTTP_PORT,
    logLevel: e.LOG_LEVEL,
  };
}

const JwksSchema = z.object({
  keys: z
    .array(z.looseObject({ kty: z.string(), kid: z.string().optional() }))
    .min(1, 'needs at least one key'),
});

function principalKeys(e: Env, readFile: (path: string) => string): JSONWebKeySet {
  const inline = e.PRINCIPAL_JWKS?.trim();
  const file = e.PRINCIPAL_JWKS_FILE?.trim();
  if ((inline === undefined || inline === '') === (file === undefined || file === '')) {
    throw new ExecutorConfigError(['PRINCIPAL_JWKS / PRINCIPAL_JWKS_FILE: set exactly one of the two']);
  }
  const name = inline ? 'PRINCIPAL_JWKS' : 'PRINCIPAL_JWKS_FILE';
  let text: string;
  try {
    text = inline ? inline : readFile(file as string);
  } catch (err) {
    throw new ExecutorConfigError([
      `${name}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    ]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ExecutorConfigError([`${name}: not valid JSON`]);
  }
  const jwks = JwksSchema.safeParse(json);
  if (!jwks.success) {
    throw new ExecutorConfigError(
      jwks.error.issues.map((issue) => `${name}: ${issue.path.join('.')} ${issue.message}`),
    );
  }
  return jwks.data;
}
