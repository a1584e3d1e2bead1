import {
  childSpanId,
  isValidTraceId,
  newTraceId,
  readTraceContext,
  SAMPLED_FLAG,
  traceHeaders,
  TRACESTATE_HEADER,
  type HexSource,
  type TraceContext,
} from '../../libs/observability/trace-context.js';

/** The trace an executor's handling of one call belongs to. */
export interface CallTrace {
  /** The trace id written into the result, the audit record and the dead letter. */
  readonly traceId: string;
  /** The request's `traceparent`, when valid: the remote parent of the executor's call span. */
  readonly parent: TraceContext | null;
  /**
   * Headers for what is published about the call when no call span ran (poison, refusals before
   * the pipeline): `traceparent` for a fresh span of the executor's in `traceId`, and the
   * request's `tracestate`.
   */
  readonly headers: Readonly<Record<string, string>>;
  /** The request's `tracestate`, passed on unchanged (W3C asks this of a participant adding none). */
  readonly tracestate?: string;
}

/**
 * The executor's view of one call's trace. The trace id is the event's `traceId` when it is a valid
 * W3C id (it is part of the contract and what the audit record and result carry), else the
 * request's `traceparent` trace id, else a fresh one — so the outputs always carry one valid,
 * consistent id. The span id of `headers` is new (the executor's span is a child of the
 * requester's); the sampled flag is kept when the request's header belongs to the same trace, and
 * set otherwise. `tracestate` is kept when non-empty and at most 512 characters.
 */
export function callTrace(
  eventTraceId: string | undefined,
  requestHeaders: Readonly<Record<string, string | undefined>>,
  hex?: HexSource,
): CallTrace {
  const parent = readTraceContext(requestHeaders);
  const traceId = isValidTraceId(eventTraceId) ? eventTraceId : (parent?.traceId ?? newTraceId(hex));
  const flags = parent !== null && parent.traceId === traceId ? parent.flags : SAMPLED_FLAG;
  const state = requestHeaders[TRACESTATE_HEADER];
  const tracestate = state !== undefined && state.length > 0 && state.length <= 512 ? state : undefined;
  const own = { traceId, spanId: childSpanId(hex), flags };
  return {
    traceId,
    parent,
    headers: spanHeaders(own, tracestate),
    ...(tracestate === undefined ? {} : { tracestate }),
  };
}

/**
 * The headers for everything published within the call span `outgoing` (a traced pipeline run's
 * `outgoing` context), so consumers' spans are its children; `trace.headers` when the run had no
 * span. The request's `tracestate` goes along either way.
 */
export function outputHeaders(
  trace: CallTrace,
  outgoing: TraceContext | undefined,
): Readonly<Record<string, string>> {
  return outgoing === undefined ? trace.headers : spanHeaders(outgoing, trace.tracestate);
}

function spanHeaders(span: TraceContext, tracestate: string | undefined): Record<string, string> {
  const headers = traceHeaders(span.traceId, span.spanId, span.flags);
  return tracestate === undefined ? headers : { ...headers, [TRACESTATE_HEADER]: tracestate };
}
