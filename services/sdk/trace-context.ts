import { randomBytes } from 'node:crypto';

/** The W3C Trace Context header every published call carries. */
export const TRACEPARENT = 'traceparent';

const TRACE_ID = /^[0-9a-f]{32}$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** Random lowercase hex of `bytes` bytes; replaceable in tests. */
export type HexSource = (bytes: number) => string;

export const randomHex: HexSource = (bytes) => randomBytes(bytes).toString('hex');

/**
 * The trace a turn belongs to: the caller's id when it is a valid W3C trace id (32 lowercase hex,
 * not all zeros), else a fresh one, so every published call carries a valid, shared trace id.
 */
export function turnTraceId(given: string | undefined, hex: HexSource = randomHex): string {
  if (given !== undefined && TRACE_ID.test(given) && given !== ZERO_TRACE) return given;
  let fresh = hex(16);
  if (fresh === ZERO_TRACE) fresh = '0'.repeat(31) + '1';
  return fresh;
}

/**
 * `00-<traceId>-<spanId>-01` for one published call: each call is its own span (a child of the
 * agent's turn), sampled, so the executor's spans hang under it.
 */
export function traceparent(traceId: string, hex: HexSource = randomHex): string {
  let span = hex(8);
  if (span === ZERO_SPAN) span = '0'.repeat(15) + '1';
  return `00-${traceId}-${span}-01`;
}
