import { ToolgateError } from '../../libs/core/errors.js';
import { CliError, FailureError, UnreachableError, UsageError } from './cli-error.js';

/** Socket-level codes meaning "the server is not there (or not answering)". */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/**
 * PostgreSQL SQLSTATEs meaning the database cannot be used as configured: authentication failed,
 * the database does not exist, too many connections, the server is starting or shutting down.
 */
const PG_UNAVAILABLE = new Set(['28000', '28P01', '3D000', '53300', '57P01', '57P02', '57P03']);

/** kafkajs errors that mean no broker could be reached. */
const KAFKA_UNREACHABLE = new Set([
  'KafkaJSConnectionError',
  'KafkaJSBrokerNotFound',
  'KafkaJSRequestTimeoutError',
]);

/** Messages of client libraries that give no code for a lost or impossible connection. */
const UNREACHABLE_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /connection terminated/i,
  /connection is closed/i,
  /fetch failed/i,
];

/**
 * Whether `err` (or anything in its cause chain: `cause`, kafkajs' `originalError`, an
 * AggregateError's `errors`) says a server could not be reached. Never throws.
 */
export function isUnreachable(err: unknown, depth = 0): boolean {
  if (depth > 8 || err === null || typeof err !== 'object') return false;
  const e = err as {
    code?: unknown;
    name?: unknown;
    message?: unknown;
    cause?: unknown;
    originalError?: unknown;
    errors?: unknown;
  };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || PG_UNAVAILABLE.has(e.code))) return true;
  if (typeof e.name === 'string' && KAFKA_UNREACHABLE.has(e.name)) return true;
  if (typeof e.message === 'string' && UNREACHABLE_MESSAGES.some((re) => re.test(e.message as string)))
    return true;
  const nested = [e.cause, e.originalError, ...(Array.isArray(e.errors) ? (e.errors as unknown[]) : [])];
  return nested.some((n) => isUnreachable(n, depth + 1));
}

/**
 * Turns anything a command threw into a {@link CliError} with the right exit code: CliErrors stay as
 * they are; connection failures become `unreachable` (3) naming `dependency` when known; a
 * ToolgateError about bad input (SCHEMA_INVALID) is a usage error (2); the rest is a failure (1).
 * Never throws.
 */
export function toCliError(err: unknown, command: string, dependency?: string): CliError {
  if (err instanceof CliError) return err;
  const message = describe(err);
  if (isUnreachable(err)) {
    return new UnreachableError(
      dependency ?? 'a server',
      `cannot reach ${dependency ?? 'a server'}: ${message}`,
      {
        cause: err,
      },
    );
  }
  if (err instanceof ToolgateError && err.code === 'SCHEMA_INVALID') return new UsageError(message, command);
  if ((err as { code?: unknown } | null)?.code === '42P01') {
    return new FailureError(
      message,
      'The toolgate tables are missing here: run the migrations (the services run them on start) or check the database URL and its search_path.',
      { cause: err },
    );
  }
  return new FailureError(message, undefined, { cause: err });
}

/** One line describing an error: its message, or the first message in its cause chain. */
export function describe(err: unknown): string {
  if (err instanceof Error) {
    if (err.message) return err.message;
    if (err instanceof AggregateError && err.errors.length > 0) return describe(err.errors[0]);
    if (err.cause !== undefined) return describe(err.cause);
    return err.name;
  }
  return String(err);
}
