import { ZodError } from 'zod';
import { ToolgateError } from './errors.js';
import type { ErrorCode } from './errors.js';

/** Inputs `classify` cannot know by itself. */
export interface ClassifyOptions {
  /**
   * Current time in epoch ms, needed only to turn an HTTP-date `Retry-After` into a delay. Without it,
   * date-form `Retry-After` values are ignored (the seconds form and `retry-after-ms` still work).
   */
  readonly nowMs?: number;
}

/**
 * Turns anything thrown by a tool, a client library or our own code into a {@link ToolgateError}.
 *
 * Contract:
 * - Total: returns for every input, never throws — including `null`, strings, cyclic objects, proxies
 *   and objects whose getters or `toString` throw. Unknown shapes become INTERNAL.
 * - A `ToolgateError` is returned as is (same instance).
 * - The returned `message` is one of a fixed set of model-readable sentences; the thrown value's own
 *   text is never copied into it (it may carry secrets, URLs with tokens or another tenant's data).
 *   The original value is kept as `cause` for logs that redact.
 * - Mapping, checked on the error and then up to {@link MAX_CAUSE_DEPTH} levels of `cause`:
 *   opossum `EOPENBREAKER`/`ESEMLOCKED`/`ESHUTDOWN` → BREAKER_OPEN (the call was not attempted);
 *   opossum `ETIMEDOUT`, AbortError, TimeoutError, socket resets and read timeouts → TIMEOUT (the
 *   request may have reached the downstream: outcome unknown); connection refused, DNS failures and
 *   connect timeouts → SERVER_ERROR (never reached the downstream); ZodError → SCHEMA_INVALID; HTTP
 *   429 → RATE_LIMITED with `retryAfterMs` from `retry-after-ms`/`retry-after`; 504 → TIMEOUT (the
 *   gateway gave up, the origin may have applied the effect); other 5xx → SERVER_ERROR; 401/403 →
 *   CALLER_ERROR, not retryable (our credentials, not the model's arguments); other 4xx →
 *   CALLER_ERROR, retryable with corrected arguments.
 */
export function classify(err: unknown, options: ClassifyOptions = {}): ToolgateError {
  try {
    if (isToolgateError(err)) return err;
    const chain = causeChain(err);
    for (const level of chain) {
      const found = classifyOne(level, options);
      if (found !== undefined) return build(found, err);
    }
    // A client's "connection error" with no recognizable cause: the request may have been sent.
    if (chain.some((level) => namesOf(level).some((name) => WEAK_TIMEOUT_NAMES.has(name)))) {
      return build({ code: 'TIMEOUT' }, err);
    }
    return build({ code: 'INTERNAL' }, err);
  } catch {
    return build({ code: 'INTERNAL' }, err);
  }
}

/** How far down `error.cause` classify looks (fetch wraps the socket error one level down). */
export const MAX_CAUSE_DEPTH = 5;

interface Verdict {
  readonly code: ErrorCode;
  readonly message?: string;
  readonly retryable?: boolean;
  readonly retryAfterMs?: number;
  readonly suggestedFix?: string;
}

const MESSAGES: Partial<Record<ErrorCode, string>> = {
  TIMEOUT:
    'The downstream service did not answer in time. ' +
    'The request may or may not have been applied; its outcome is unknown.',
  CALLER_ERROR: 'The downstream service rejected the request as invalid.',
  RATE_LIMITED: 'The downstream service is rate limiting requests.',
  SERVER_ERROR: 'The downstream service failed. Changing the arguments will not help.',
  BREAKER_OPEN: 'The downstream service is temporarily unavailable; the call was not attempted.',
  SCHEMA_INVALID: "The arguments do not match the tool's schema.",
  INTERNAL: 'An internal error occurred while handling the tool call.',
};

const CALLER_FIX = 'Check the arguments against what the user asked for and retry with corrected values.';

const BREAKER_CODES = new Set(['EOPENBREAKER', 'ESEMLOCKED', 'ESHUTDOWN']);

/** The request may have been written to the wire: the effect is unknown. */
const UNKNOWN_OUTCOME_CODES = new Set([
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_ABORTED',
  'ABORT_ERR',
]);

/** The request never left (or never reached the service): the effect definitely did not happen. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
]);

/** Error names (or constructor names) meaning "we stopped waiting": the outcome is unknown. */
const TIMEOUT_NAMES = new Set([
  'AbortError',
  'TimeoutError',
  'APIConnectionTimeoutError',
  'APIUserAbortError',
]);
const WEAK_TIMEOUT_NAMES = new Set(['APIConnectionError']);

function classifyOne(value: unknown, options: ClassifyOptions): Verdict | undefined {
  if (!isObjectLike(value)) return undefined;
  const code = stringProp(value, 'code');
  if (code !== undefined && BREAKER_CODES.has(code)) return { code: 'BREAKER_OPEN' };
  if (isZodError(value)) return { code: 'SCHEMA_INVALID' };
  if (code !== undefined && UNKNOWN_OUTCOME_CODES.has(code)) return { code: 'TIMEOUT' };
  if (code !== undefined && NOT_SENT_CODES.has(code)) return { code: 'SERVER_ERROR' };
  const status = httpStatus(value);
  if (status !== undefined) return fromStatus(status, value, options);
  if (namesOf(value).some((name) => TIMEOUT_NAMES.has(name))) return { code: 'TIMEOUT' };
  return undefined;
}

function fromStatus(status: number, value: object, options: ClassifyOptions): Verdict {
  if (status === 429) {
    const retryAfterMs = retryAfter(value, options);
    return retryAfterMs === undefined ? { code: 'RATE_LIMITED' } : { code: 'RATE_LIMITED', retryAfterMs };
  }
  if (status === 504) return { code: 'TIMEOUT' };
  if (status >= 500) return { code: 'SERVER_ERROR' };
  if (status === 401 || status === 403) {
    return {
      code: 'CALLER_ERROR',
      message: 'The downstream service refused this request.',
      retryable: false,
    };
  }
  if (status === 404) {
    return {
      code: 'CALLER_ERROR',
      message: 'The downstream service did not find what the arguments refer to.',
      suggestedFix: CALLER_FIX,
    };
  }
  if (status === 409) {
    return {
      code: 'CALLER_ERROR',
      message: 'The downstream service reported a conflict with the current state of the resource.',
      suggestedFix: 'Read the current state of the resource before trying again.',
    };
  }
  return { code: 'CALLER_ERROR', suggestedFix: CALLER_FIX };
}

function build(verdict: Verdict, cause: unknown): ToolgateError {
  return new ToolgateError(verdict.code, verdict.message ?? MESSAGES[verdict.code] ?? MESSAGES.INTERNAL!, {
    cause,
    ...(verdict.retryable === undefined ? {} : { retryable: verdict.retryable }),
    ...(verdict.retryAfterMs === undefined ? {} : { retryAfterMs: verdict.retryAfterMs }),
    ...(verdict.suggestedFix === undefined ? {} : { suggestedFix: verdict.suggestedFix }),
  });
}

function isToolgateError(value: unknown): value is ToolgateError {
  try {
    return value instanceof ToolgateError;
  } catch {
    return false; // a Proxy whose getPrototypeOf trap throws
  }
}

function isZodError(value: object): boolean {
  try {
    if (value instanceof ZodError) return true;
  } catch {
    return false;
  }
  // Another copy of zod (a tool bundling its own) fails instanceof but keeps the shape.
  return nameOf(value) === 'ZodError' && Array.isArray(prop(value, 'issues'));
}

function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [err];
  const seen = new Set<unknown>([err]);
  let current = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH; depth++) {
    const next = prop(current, 'cause');
    if (!isObjectLike(next) || seen.has(next)) break;
    chain.push(next);
    seen.add(next);
    current = next;
  }
  return chain;
}

function httpStatus(value: object): number | undefined {
  for (const candidate of [
    prop(value, 'status'),
    prop(value, 'statusCode'),
    prop(prop(value, 'response'), 'status'),
    prop(prop(value, 'response'), 'statusCode'),
  ]) {
    if (
      typeof candidate === 'number' &&
      Number.isInteger(candidate) &&
      candidate >= 400 &&
      candidate <= 599
    ) {
      return candidate;
    }
  }
  return undefined;
}

/** Longest wait we pass on; a larger header is a downstream bug, and the model cannot wait a day. */
const MAX_RETRY_AFTER_MS = 3_600_000;

function retryAfter(value: object, options: ClassifyOptions): number | undefined {
  const direct = prop(value, 'retryAfterMs');
  if (typeof direct === 'number') return clampDelay(direct);
  for (const headers of [prop(value, 'headers'), prop(prop(value, 'response'), 'headers')]) {
    const ms = header(headers, 'retry-after-ms');
    if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return clampDelay(Number(ms));
    const after = header(headers, 'retry-after');
    if (after === undefined) continue;
    if (/^\s*\d+(\.\d+)?\s*$/.test(after)) return clampDelay(Number(after) * 1000);
    const date = Date.parse(after);
    if (options.nowMs !== undefined && Number.isFinite(date)) return clampDelay(date - options.nowMs);
  }
  return undefined;
}

function clampDelay(ms: number): number | undefined {
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Math.ceil(ms)));
}

/** Reads a header from a fetch `Headers`-like object or a plain record, case-insensitively. */
function header(headers: unknown, name: string): string | undefined {
  if (!isObjectLike(headers)) return undefined;
  const get = prop(headers, 'get');
  if (typeof get === 'function') {
    try {
      const value: unknown = get.call(headers, name);
      return typeof value === 'string' ? value : undefined;
    } catch {
      return undefined;
    }
  }
  let keys: string[];
  try {
    keys = Object.keys(headers);
  } catch {
    return undefined;
  }
  for (const key of keys) {
    if (key.toLowerCase() !== name) continue;
    const value = prop(headers, key);
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  }
  return undefined;
}

function nameOf(value: unknown): string | undefined {
  return stringProp(value, 'name');
}

/** `name`, and the constructor's name: the OpenAI and Anthropic SDKs leave `name` as "Error". */
function namesOf(value: unknown): string[] {
  const names: string[] = [];
  const name = nameOf(value);
  if (name !== undefined) names.push(name);
  const ctorName = stringProp(prop(value, 'constructor'), 'name');
  if (ctorName !== undefined) names.push(ctorName);
  return names;
}

function stringProp(value: unknown, key: string): string | undefined {
  const v = prop(value, key);
  return typeof v === 'string' ? v : undefined;
}

/** Reads one property, swallowing whatever a hostile getter or Proxy trap throws. */
function prop(value: unknown, key: string): unknown {
  if (!isObjectLike(value)) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function isObjectLike(value: unknown): value is object {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}
