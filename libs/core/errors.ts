import type { Outcome } from './outcome.js';

/**
 * The closed list of error codes. Each code maps to exactly one outcome (see {@link outcomeForCode}).
 * Adding a code is a contract change: consumers switch on these.
 */
export const ERROR_CODES = [
  'UNKNOWN_TOOL',
  'TOOL_DEPRECATED',
  'SCHEMA_INVALID',
  'UNAUTHORIZED',
  'INVALID_PRINCIPAL',
  'RATE_LIMITED',
  'POLICY_VIOLATION',
  'IDEMPOTENCY_CONFLICT',
  'DEPENDENCY_UNAVAILABLE',
  'CALLER_ERROR',
  'SERVER_ERROR',
  'TIMEOUT',
  'BREAKER_OPEN',
  'BAD_OUTPUT',
  'UNRESOLVED',
  'MALFORMED_EVENT',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

const OUTCOME_BY_CODE: Readonly<Record<ErrorCode, Outcome>> = {
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  TOOL_DEPRECATED: 'UNKNOWN_TOOL',
  SCHEMA_INVALID: 'SCHEMA_INVALID',
  UNAUTHORIZED: 'UNAUTHORIZED',
  INVALID_PRINCIPAL: 'UNAUTHORIZED',
  RATE_LIMITED: 'RATE_LIMITED',
  POLICY_VIOLATION: 'POLICY_VIOLATION',
  IDEMPOTENCY_CONFLICT: 'SCHEMA_INVALID',
  DEPENDENCY_UNAVAILABLE: 'EXECUTION_ERROR',
  CALLER_ERROR: 'EXECUTION_ERROR',
  SERVER_ERROR: 'EXECUTION_ERROR',
  TIMEOUT: 'EXECUTION_ERROR',
  BREAKER_OPEN: 'EXECUTION_ERROR',
  BAD_OUTPUT: 'EXECUTION_ERROR',
  UNRESOLVED: 'UNRESOLVED',
  MALFORMED_EVENT: 'SCHEMA_INVALID',
  INTERNAL: 'EXECUTION_ERROR',
};

/** The outcome a result carries when it fails with this code. Total over {@link ErrorCode}. */
export function outcomeForCode(code: ErrorCode): Outcome {
  return OUTCOME_BY_CODE[code];
}

export interface ToolgateErrorOptions {
  /**
   * Whether the model may usefully call again (after a wait, or with corrected arguments); it is the
   * result's `error.retryable`. Default per code. Whether the executor itself retries is a separate
   * question: only transient kinds (`isTransientKind`), and not when the tool said false here.
   */
  readonly retryable?: boolean;
  readonly retryAfterMs?: number;
  /** A model-readable hint for how to make the call succeed. Never given for UNAUTHORIZED. */
  readonly suggestedFix?: string;
  readonly cause?: unknown;
}

/**
 * The one error type toolgate raises. `message` is written for the model (it may be shown to it) and
 * must never contain secrets, tokens or another tenant's data.
 */
export class ToolgateError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly suggestedFix: string | undefined;

  constructor(code: ErrorCode, message: string, options: ToolgateErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolgateError';
    this.code = code;
    this.retryable = options.retryable ?? DEFAULT_RETRYABLE[code];
    this.retryAfterMs = options.retryAfterMs;
    this.suggestedFix = options.suggestedFix;
  }

  get outcome(): Outcome {
    return outcomeForCode(this.code);
  }
}

/** Whether the model (or caller) may usefully try again, absent a more specific decision. */
const DEFAULT_RETRYABLE: Readonly<Record<ErrorCode, boolean>> = {
  UNKNOWN_TOOL: true,
  TOOL_DEPRECATED: true,
  SCHEMA_INVALID: true,
  UNAUTHORIZED: false,
  INVALID_PRINCIPAL: false,
  RATE_LIMITED: true,
  POLICY_VIOLATION: false,
  IDEMPOTENCY_CONFLICT: false,
  DEPENDENCY_UNAVAILABLE: true,
  CALLER_ERROR: true,
  SERVER_ERROR: true,
  TIMEOUT: true,
  BREAKER_OPEN: true,
  BAD_OUTPUT: false,
  UNRESOLVED: false,
  MALFORMED_EVENT: false,
  INTERNAL: false,
};
