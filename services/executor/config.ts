import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { JSONWebKeySet } from 'jose';
import { z } from 'zod';
import { DEFAULT_CATALOG_MODULE } from './catalog.js';
import {
  DATABASE_URL,
  IDEMPOTENCY_ENV,
  nonEmpty,
  parseEnv,
  PARTITION_ENV,
  partitionCounts,
  positiveInt,
  REDIS_URL,
  SERVICE_ENV,
  serviceSettings,
  ServiceConfigError,
  type PartitionCounts,
  type ServiceSettings,
} from './service-env.js';

/** The environment the executor reads, with defaults; each variable is documented where it is used. */
const EnvSchema = z.object({
  ...SERVICE_ENV,
  ...PARTITION_ENV,
  ...IDEMPOTENCY_ENV,
  REDIS_URL,
  DATABASE_URL,
  TOOLGATE_GROUP_ID: nonEmpty.default('toolgate-executor'),
  /** Also the idempotency-lease owner: must be unique per running instance. */
  EXECUTOR_ID: nonEmpty.max(200).optional(),
  /** Calls one executor runs at once, across all of its partitions. */
  MAX_CONCURRENCY: positiveInt.max(10_000).default(64),
  /** Trusted principal-signing keys, as a JWKS JSON text… */
  PRINCIPAL_JWKS: z.string().optional(),
  /** …or the path of a file holding it. Exactly one of the two. */
  PRINCIPAL_JWKS_FILE: z.string().optional(),
  PRINCIPAL_ISSUER: nonEmpty,
  PRINCIPAL_AUDIENCE: nonEmpty,
  PRINCIPAL_MAX_AGE_SEC: positiveInt.optional(),
  TOOLGATE_CATALOG_MODULE: nonEmpty.default(DEFAULT_CATALOG_MODULE),
  LEASE_MARGIN_MS: positiveInt.default(5_000),
  /** How long a completed key's tombstone lives (0: keep none); see README, retention. */
  IDEMPOTENCY_TOMBSTONE_TTL_MS: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(30 * 24 * 3600 * 1000),
  BREAKER_ERROR_PERCENT: z.coerce.number().min(1).max(100).default(50),
  BREAKER_VOLUME: positiveInt.default(20),
  BREAKER_RESET_MS: positiveInt.default(30_000),
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(30_000),
  /** Bytes of an undecodable call a POISON dead letter keeps (they may hold argument values). */
  POISON_CAPTURE_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(1024 * 1024)
    .default(0),
});

type Env = z.infer<typeof EnvSchema>;

/** The executor's configuration, parsed once from the environment by {@link loadExecutorConfig}. */
export interface ExecutorConfig extends ServiceSettings {
  readonly redisUrl: string;
  readonly databaseUrl: string;
  readonly groupId: string;
  readonly executorId: string;
  readonly maxConcurrency: number;
  readonly partitions: PartitionCounts;
  readonly principal: {
    readonly jwks: JSONWebKeySet;
    readonly issuer: string;
    readonly audience: string;
    readonly maxTokenAgeSec?: number;
  };
  readonly redisKeyPrefix: string;
  readonly catalogModule: string;
  /** Life of a completed key's tombstone; 0 keeps none (no retention signal). */
  readonly tombstoneTtlMs: number;
  readonly resultTtlMs: number;
  readonly leaseMarginMs: number;
  readonly breaker: { readonly errorPercent: number; readonly volume: number; readonly resetMs: number };
  readonly shutdownTimeoutMs: number;
  readonly poisonCaptureBytes: number;
}

/** Thrown with every problem of the environment listed, one per line, by variable name. */
export class ExecutorConfigError extends ServiceConfigError {
  override readonly name = 'ExecutorConfigError';
  constructor(problems: readonly string[]) {
    super('executor', problems);
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
  const e = parseEnv(EnvSchema, env, (problems) => new ExecutorConfigError(problems));
  const jwks = principalKeys(e, readFile);
  return {
    ...serviceSettings(e),
    redisUrl: e.REDIS_URL,
    databaseUrl: e.DATABASE_URL,
    groupId: e.TOOLGATE_GROUP_ID,
    executorId: e.EXECUTOR_ID ?? `executor-${hostname()}-${process.pid}`,
    maxConcurrency: e.MAX_CONCURRENCY,
    partitions: partitionCounts(e),
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
    tombstoneTtlMs: e.IDEMPOTENCY_TOMBSTONE_TTL_MS,
    breaker: { errorPercent: e.BREAKER_ERROR_PERCENT, volume: e.BREAKER_VOLUME, resetMs: e.BREAKER_RESET_MS },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    poisonCaptureBytes: e.POISON_CAPTURE_BYTES,
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
