import type { JSONWebKeySet } from 'jose';
import { z } from 'zod';
import { DEFAULT_PRINCIPAL_AUDIENCE, DEFAULT_PRINCIPAL_ISSUER } from '../../libs/auth/principal-defaults.js';
import { EXECUTOR_DEFAULTS } from './create-executor.js';
import {
  configErrorClass,
  DATABASE_URL,
  defaultInstanceId,
  EXECUTION_ENV,
  executionSettings,
  jwksFromEnv,
  nonEmpty,
  positiveInt,
  readTextFile,
  type Environment,
  type ExecutionSettings,
} from '../../libs/runtime/env.js';

/** The environment the executor reads, with defaults; each variable is documented where it is used. */
const EnvSchema = z.object({
  ...EXECUTION_ENV,
  /** Only for a catalog that uses Postgres (the store catalog does). */
  DATABASE_URL: DATABASE_URL.optional(),
  TOOLGATE_GROUP_ID: nonEmpty.default('toolgate-executor'),
  /** Also the idempotency-lease owner: must be unique per running instance. */
  EXECUTOR_ID: nonEmpty.max(200).optional(),
  /** Calls one executor runs at once, across all of its partitions. */
  MAX_CONCURRENCY: positiveInt.max(10_000).default(EXECUTOR_DEFAULTS.maxConcurrency),
  /** Trusted principal-signing keys, as a JWKS JSON text… */
  PRINCIPAL_JWKS: z.string().optional(),
  /** …or the path of a file holding it. Exactly one of the two. */
  PRINCIPAL_JWKS_FILE: z.string().optional(),
  /** The issuer assertions must name; the SDK signs with the same default. */
  PRINCIPAL_ISSUER: nonEmpty.default(DEFAULT_PRINCIPAL_ISSUER),
  /** The audience assertions must name; the SDK signs with the same default. */
  PRINCIPAL_AUDIENCE: nonEmpty.default(DEFAULT_PRINCIPAL_AUDIENCE),
  PRINCIPAL_MAX_AGE_SEC: positiveInt.optional(),
  LEASE_MARGIN_MS: positiveInt.default(EXECUTOR_DEFAULTS.leaseMarginMs),
  /** How long a completed key's tombstone lives (0: keep none); see README, retention. */
  IDEMPOTENCY_TOMBSTONE_TTL_MS: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(EXECUTOR_DEFAULTS.tombstoneTtlMs),
  BREAKER_ERROR_PERCENT: z.coerce.number().min(1).max(100).default(EXECUTOR_DEFAULTS.breaker.errorPercent),
  BREAKER_VOLUME: positiveInt.default(EXECUTOR_DEFAULTS.breaker.volume),
  BREAKER_RESET_MS: positiveInt.default(EXECUTOR_DEFAULTS.breaker.resetMs),
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(EXECUTOR_DEFAULTS.shutdownTimeoutMs),
  /** Bytes of an undecodable call a POISON dead letter keeps (they may hold argument values). */
  POISON_CAPTURE_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(1024 * 1024)
    .default(EXECUTOR_DEFAULTS.poisonCaptureBytes),
});

type Env = z.infer<typeof EnvSchema>;

/** The executor's configuration, parsed once from the environment by {@link loadExecutorConfig}. */
export interface ExecutorConfig extends ExecutionSettings {
  /** Opened only when the catalog asks for Postgres. */
  readonly databaseUrl: string | undefined;
  readonly groupId: string;
  readonly executorId: string;
  readonly maxConcurrency: number;
  readonly principal: {
    readonly jwks: JSONWebKeySet;
    readonly issuer: string;
    readonly audience: string;
    readonly maxTokenAgeSec?: number;
  };
  /** Life of a completed key's tombstone; 0 keeps none (no retention signal). */
  readonly tombstoneTtlMs: number;
  readonly leaseMarginMs: number;
  readonly breaker: { readonly errorPercent: number; readonly volume: number; readonly resetMs: number };
  readonly shutdownTimeoutMs: number;
  readonly poisonCaptureBytes: number;
}

/** Thrown with every problem of the environment listed, one per line, by variable name. */
export class ExecutorConfigError extends configErrorClass('executor', 'ExecutorConfigError') {}

/**
 * Parses the executor's environment once. `readFile` reads PRINCIPAL_JWKS_FILE (injected for tests).
 * Throws {@link ExecutorConfigError} naming every bad or missing variable; never echoes a value
 * (a URL may carry a password).
 */
export function loadExecutorConfig(
  env: Environment = process.env,
  readFile: (path: string) => string = readTextFile,
): ExecutorConfig {
  const e = ExecutorConfigError.parse(EnvSchema, env);
  const jwks = principalKeys(e, readFile);
  return {
    ...executionSettings(e),
    databaseUrl: e.DATABASE_URL,
    groupId: e.TOOLGATE_GROUP_ID,
    executorId: e.EXECUTOR_ID ?? defaultInstanceId('executor'),
    maxConcurrency: e.MAX_CONCURRENCY,
    principal: {
      jwks,
      issuer: e.PRINCIPAL_ISSUER,
      audience: e.PRINCIPAL_AUDIENCE,
      ...(e.PRINCIPAL_MAX_AGE_SEC === undefined ? {} : { maxTokenAgeSec: e.PRINCIPAL_MAX_AGE_SEC }),
    },
    leaseMarginMs: e.LEASE_MARGIN_MS,
    tombstoneTtlMs: e.IDEMPOTENCY_TOMBSTONE_TTL_MS,
    breaker: { errorPercent: e.BREAKER_ERROR_PERCENT, volume: e.BREAKER_VOLUME, resetMs: e.BREAKER_RESET_MS },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    poisonCaptureBytes: e.POISON_CAPTURE_BYTES,
  };
}

function principalKeys(e: Env, readFile: (path: string) => string): JSONWebKeySet {
  const jwks = jwksFromEnv(
    { inline: ['PRINCIPAL_JWKS', e.PRINCIPAL_JWKS], file: ['PRINCIPAL_JWKS_FILE', e.PRINCIPAL_JWKS_FILE] },
    readFile,
    (problems) => new ExecutorConfigError(problems),
  );
  if (jwks === undefined) {
    throw new ExecutorConfigError(['PRINCIPAL_JWKS / PRINCIPAL_JWKS_FILE: set exactly one of the two']);
  }
  return jwks;
}
