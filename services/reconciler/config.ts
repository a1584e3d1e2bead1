import { createPrivateKey } from 'node:crypto';
import { z } from 'zod';
import { DEFAULT_PRINCIPAL_AUDIENCE, DEFAULT_PRINCIPAL_ISSUER } from '../../libs/auth/principal-defaults.js';
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
  readTextFile,
  type Environment,
  type ExecutionSettings,
  type PostgresSettings,
} from '../../libs/runtime/env.js';
import { DEFAULT_AUTO_REDRIVE_MAX, DEFAULT_RESUBMIT_GRACE_MS } from './auto-redrive.js';
import type { ResubmissionSigning } from './resubmission-signer.js';

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
  /** Automatic redrives per case at most (forwards-key tools; see README.md); 0 turns them off. */
  AUTO_REDRIVE_MAX: z.coerce.number().int().min(0).max(100).default(DEFAULT_AUTO_REDRIVE_MAX),
  /** After an automatic re-submission, how long the executor gets before its answer is first read. */
  RESUBMIT_GRACE_MS: positiveInt.default(DEFAULT_RESUBMIT_GRACE_MS),
  /**
   * PEM private key (Ed25519 or P-256) automatic re-submissions are signed with; the executors'
   * PRINCIPAL_JWKS must list its public half. Unset: no automatic redrive.
   */
  RECONCILER_SIGNING_KEY_FILE: nonEmpty.optional(),
  RECONCILER_SIGNING_KID: nonEmpty.optional(),
  /** The issuer and audience of those assertions: the executors' PRINCIPAL_ISSUER / PRINCIPAL_AUDIENCE. */
  PRINCIPAL_ISSUER: nonEmpty.default(DEFAULT_PRINCIPAL_ISSUER),
  PRINCIPAL_AUDIENCE: nonEmpty.default(DEFAULT_PRINCIPAL_AUDIENCE),
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
  readonly autoRedriveMax: number;
  readonly resubmitGraceMs: number;
  /** How automatic re-submissions are signed; undefined when no key is configured (none are made). */
  readonly resubmissionSigning: ResubmissionSigning | undefined;
}

/** Thrown with every problem of the environment listed, one per line, by variable name. */
export class ReconcilerConfigError extends configErrorClass('reconciler', 'ReconcilerConfigError') {}

/**
 * Parses the reconciler's environment once, and reads the signing key file it names, if any.
 * Throws {@link ReconcilerConfigError} naming every bad or missing variable (and a key file that
 * cannot be read or holds no private key); never echoes a value (URLs may carry passwords).
 */
export function loadReconcilerConfig(
  env: Environment = process.env,
  readFile: (path: string) => string = readTextFile,
): ReconcilerConfig {
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
    autoRedriveMax: e.AUTO_REDRIVE_MAX,
    resubmitGraceMs: e.RESUBMIT_GRACE_MS,
    resubmissionSigning:
      e.RECONCILER_SIGNING_KEY_FILE === undefined
        ? undefined
        : {
            keyPem: signingKey(e.RECONCILER_SIGNING_KEY_FILE, readFile),
            kid: e.RECONCILER_SIGNING_KID,
            issuer: e.PRINCIPAL_ISSUER,
            audience: e.PRINCIPAL_AUDIENCE,
          },
  };
}

/** The PEM private key in the file, checked to be one. */
function signingKey(path: string, readFile: (path: string) => string): string {
  let pem: string;
  try {
    pem = readFile(path);
  } catch {
    throw new ReconcilerConfigError(['RECONCILER_SIGNING_KEY_FILE: cannot read the file it names']);
  }
  try {
    createPrivateKey(pem);
  } catch {
    throw new ReconcilerConfigError(['RECONCILER_SIGNING_KEY_FILE: the file holds no PEM private key']);
  }
  return pem;
}
