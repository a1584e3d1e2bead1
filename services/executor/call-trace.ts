import { randomBytes } from 'node:crypto';

/** The W3C Trace Context header names carried on every message the executor reads and writes. */
export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

const TRACE_ID = /^[0-9a-f]{32}$/;
const TRACEPARENT_V00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** Whether `value` is a valid W3C trace id (32 lowercase hex, not all zeros). */
export function isTraceId(value: string): boolean {
  return TRACE_ID.test(value) && value !== ZERO_TRACE;
}

export interface ParsedTraceparent {
  readonly traceId: string;
  readonly parentSpanId: string;
  readonly flags: string;
}

/** Parses a version-00 `traceparent`; undefined for anything else (absent, malformed, all-zero ids). */
export function parseTraceparent(header: string | undefined): ParsedTraceparent | undefined {
  if (header === undefined) return undefined;
  const match = TRACEPARENT_V00.exec(header.trim());
  if (match === null) return undefined;
  const [, traceId, parentSpanId, flags] = match as unknown as [string, string, string, string];
  if (traceId === ZERO_TRACE || parentSpanId === ZERO_SPAN) return undefined;
  return { traceId, parentSpanId, flags };
}

/** The trace an executor's handling of one call belongs to, and the headers its outputs carry. */
export interface CallTrace {
  /** The trace id written into the result, the audit record and the dead letter. */
  readonly traceId: string;
  /** `traceparent` (and `tracestate` when the request had one) for every message published for the call. */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The executor's span of one call. The trace id is the event's `traceId` when it is a valid W3C
 * id (it is part of the contract and what the audit record and result carry), else the request's
 * `traceparent` trace id, else a fresh one — so the outputs always carry one valid, consistent id.
 * The span id is new (the executor's span is a child of the requester's); the sampled flag is kept
 * when the request's header belongs to the same trace, and set otherwise. `tracestate` is passed on
 * unchanged, as W3C asks of a participant that adds no state of its own.
 */
export function callTrace(
  eventTraceId: string | undefined,
  requestHeaders: Readonly<Record<string, string>>,
  newId: (bytes: number) => string = randomHex,
): CallTrace {
  const parent = parseTraceparent(requestHeaders[TRACEPARENT]);
  const traceId =
    eventTraceId !== undefined && isTraceId(eventTraceId) ? eventTraceId : (parent?.traceId ?? newId(16));
  const flags = parent !== undefined && parent.traceId === traceId ? parent.flags : '01';
  let spanId = newId(8);
  if (spanId === ZERO_SPAN) spanId = '0000000000000001';
  const headers: Record<string, string> = { [TRACEPARENT]: `00-${traceId}-${spanId}-${flags}` };
  const state = requestHeaders[TRACESTATE];
  if (state !== undefined && state.length > 0 && state.length <= 512) headers[TRACESTATE] = state;
  return { traceId, headers };
}

function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}
