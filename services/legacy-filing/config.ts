import { z } from 'zod';
import { configErrorClass, type Environment } from '../../libs/runtime/env.js';

const rate = z.coerce.number().min(0).max(1);
const ms = z.coerce.number().int().min(0);

const EnvSchema = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'expected postgres://…'),
  /** Schema the filings table lives in (created if missing). */
  LEGACY_FILING_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'use a lower-case SQL identifier')
    .default('legacy_filing'),
  /** Loopback by default: this is a fake for local runs and tests. */
  LEGACY_FILING_HOST: z.string().min(1).default('127.0.0.1'),
  LEGACY_FILING_PORT: z.coerce.number().int().min(0).max(65_535).default(7410),
  LEGACY_FILING_COMMIT_WINDOW_MS: ms.min(1).default(2_000),
  LEGACY_FILING_DROP_AFTER_COMMIT_RATE: rate.default(0),
  LEGACY_FILING_DROP_BEFORE_COMMIT_RATE: rate.default(0),
  LEGACY_FILING_SLOW_RATE: rate.default(0),
  LEGACY_FILING_SLOW_MS: ms.default(0),
  LEGACY_FILING_STATUS_FAILURE_RATE: rate.default(0),
  LEGACY_FILING_FAULT_SEED: z.coerce.number().int().default(1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

type Env = z.infer<typeof EnvSchema>;

/** The fake legacy filing service's configuration, parsed once by {@link loadLegacyFilingConfig}. */
export interface LegacyFilingConfig {
  readonly databaseUrl: string;
  readonly schema: string;
  readonly host: string;
  readonly port: number;
  readonly commitWindowMs: number;
  readonly faults: {
    readonly dropAfterCommit: number;
    readonly dropBeforeCommit: number;
    readonly slow: number;
    readonly statusFailure: number;
  };
  readonly slowMs: number;
  readonly faultSeed: number;
  readonly logLevel: Env['LOG_LEVEL'];
}

/** Thrown with every problem of the environment listed, by variable name (never a value). */
export class LegacyFilingConfigError extends configErrorClass('legacy-filing', 'LegacyFilingConfigError') {}

/**
 * Parses the service's environment once. Throws {@link LegacyFilingConfigError} naming every bad
 * variable, including submit fault rates that sum to more than 1.
 */
export function loadLegacyFilingConfig(env: Environment = process.env): LegacyFilingConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new LegacyFilingConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`),
    );
  }
  const e = parsed.data;
  const submitRates =
    e.LEGACY_FILING_DROP_AFTER_COMMIT_RATE +
    e.LEGACY_FILING_DROP_BEFORE_COMMIT_RATE +
    e.LEGACY_FILING_SLOW_RATE;
  if (submitRates > 1) {
    throw new LegacyFilingConfigError([
      'LEGACY_FILING_DROP_AFTER_COMMIT_RATE + LEGACY_FILING_DROP_BEFORE_COMMIT_RATE + LEGACY_FILING_SLOW_RATE: must sum to at most 1',
    ]);
  }
  return {
    databaseUrl: e.DATABASE_URL,
    schema: e.LEGACY_FILING_SCHEMA,
    host: e.LEGACY_FILING_HOST,
    port: e.LEGACY_FILING_PORT,
    commitWindowMs: e.LEGACY_FILING_COMMIT_WINDOW_MS,
    faults: {
      dropAfterCommit: e.LEGACY_FILING_DROP_AFTER_COMMIT_RATE,
      dropBeforeCommit: e.LEGACY_FILING_DROP_BEFORE_COMMIT_RATE,
      slow: e.LEGACY_FILING_SLOW_RATE,
      statusFailure: e.LEGACY_FILING_STATUS_FAILURE_RATE,
    },
    slowMs: e.LEGACY_FILING_SLOW_MS,
    faultSeed: e.LEGACY_FILING_FAULT_SEED,
    logLevel: e.LOG_LEVEL,
  };
}
