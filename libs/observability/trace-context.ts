import { randomFillSync } from 'node:crypto';

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) for messages on the bus. The trace id is
 * the join key between traces, the audit log and reconciliation cases, so it is
 * carried on every message as a `traceparent` header.
 */

/** The header names, lowercase as on the wire. */
export const TRACEPARENT_HEADER = 'traceparent';
export const TRACESTATE_HEADER = 'tracestate';

/** The sampled bit of `flags`. */
export const SAMPLED_FLAG = 0x01;

/** One parsed `traceparent`: whose child the next span is. */
export interface TraceContext {
  /** 32 lowercase hex, not all zeros. */
  readonly traceId: string;
  /** The parent span: 16 lowercase hex, not all zeros. */
  readonly spanId: string;
  /** Trace flags, 0–255; bit 0 is "sampled". */
  readonly flags: number;
}

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
// version-traceid-spanid-flags; a later version may append "-<more>", which version 00 may not.
const HEADER = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** Whether `value` is a valid W3C trace id: 32 lowercase hex, not all zeros. */
export function isValidTraceId(value: unknown): value is string {
  return typeof value === 'string' && TRACE_ID.test(value) && value !== ZERO_TRACE;
}

/** Whether `value` is a valid W3C span (parent) id: 16 lowercase hex, not all zeros. */
export function isValidSpanId(value: unknown): value is string {
  return typeof value === 'string' && SPAN_ID.test(value) && value !== ZERO_SPAN;
}

/**
 * Parses a `traceparent` header. Version 00 must be exactly `00-<32 hex>-<16 hex>-<2 hex>`; a later
 * version (01–fe) is read by its first four fields, as the spec asks, and may carry more after a
 * `-`. Uppercase hex, version ff, all-zero ids, surrounding junk and non-strings are invalid.
 * Invalid → null; never throws.
 */
export function parseTraceparent(header: unknown): TraceContext | null {
  if (typeof header !== 'string' || header.length > 512) return null;
  const match = HEADER.exec(header.trim());
  if (match === null) return null;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string | undefined,
  ];
  if (version === 'ff') return null;
  if (version === '00' && rest !== undefined) return null;
  if (!isValidTraceId(traceId) || !isValidSpanId(spanId)) return null;
  return { traceId, spanId, flags: parseInt(flags, 16) };
}

/**
 * Formats a version-00 `traceparent`. Throws RangeError for an invalid trace id, span id or flags:
 * writing a header other participants would drop silently is a bug worth seeing.
 */
export function formatTraceparent(context: TraceContext): string {
  const { traceId, spanId, flags } = context;
  if (!isValidTraceId(traceId)) throw new RangeError('traceparent: invalid trace id');
  if (!isValidSpanId(spanId)) throw new RangeError('traceparent: invalid span id');
  if (!Number.isInteger(flags) || flags < 0 || flags > 0xff)
    throw new RangeError('traceparent: invalid flags');
  return `00-${traceId}-${spanId}-${flags.toString(16).padStart(2, '0')}`;
}

/** Random bytes as lowercase hex; replaceable in tests. */
export type HexSource = (bytes: number) => string;

/** Random bytes drawn from the system's CSPRNG a pool at a time; each byte is handed out once. */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

/**
 * The default {@link HexSource}: bytes from `crypto.randomFillSync` as lowercase hex. Every call
 * used to cost one `randomBytes` call (a buffer and a trip to the CSPRNG); a call now takes its bytes
 * from a pool refilled every 4 KiB, as Node's own `randomUUID` does. Never more than the pool at once.
 */
export const randomHex: HexSource = (bytes) => {
  if (!Number.isInteger(bytes) || bytes < 0 || bytes > POOL_BYTES) {
    throw new RangeError(`randomHex: ${bytes} bytes is not between 0 and ${POOL_BYTES}`);
  }
  if (poolOffset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return hex;
};

/** A fresh trace id (random, never all zeros). */
export function newTraceId(hex: HexSource = randomHex): string {
  const id = hex(16);
  return isValidTraceId(id) ? id : '0'.repeat(31) + '1';
}

/** A fresh span id for a new child span (random, never all zeros). */
export function childSpanId(hex: HexSource = randomHex): string {
  const id = hex(8);
  return isValidSpanId(id) ? id : '0'.repeat(15) + '1';
}

/**
 * The headers to put on a bus message published within span `spanId` of trace `traceId`: the
 * consumer's span becomes its child. `flags` defaults to sampled. Total: when an id or the flags are
 * invalid the message goes without a `traceparent` (`{}`), as W3C asks, rather than with a header
 * every consumer would drop.
 */
export function traceHeaders(
  traceId: string,
  spanId: string,
  flags: number = SAMPLED_FLAG,
): Record<string, string> {
  try {
    return { [TRACEPARENT_HEADER]: formatTraceparent({ traceId, spanId, flags }) };
  } catch {
    return {};
  }
}

/**
 * The trace context a received bus message carries, from its `traceparent` header (header names
 * compared case-insensitively, as some clients capitalize them). Missing or invalid → null.
 */
export function readTraceContext(
  headers: Readonly<Record<string, string | undefined>> | undefined,
): TraceContext | null {
  if (headers === undefined || headers === null) return null;
  const direct = headers[TRACEPARENT_HEADER];
  if (direct !== undefined) return parseTraceparent(direct);
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === TRACEPARENT_HEADER) return parseTraceparent(headers[key]);
  }
  return null;
}
