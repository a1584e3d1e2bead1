import { describe, expect, it } from 'vitest';
import { isValidTraceId, parseTraceparent } from '../../../libs/observability/trace-context.js';
import { callTrace, outputHeaders } from '../../../services/executor/call-trace.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const OTHER = '0af7651916cd43dd8448eb211c80319c';

describe('call trace', () => {
  it('reads version-00 traceparent headers and ignores malformed or all-zero ones', () => {
    expect(callTrace(TRACE, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` }).parent).toEqual({
      traceId: TRACE,
      spanId: '00f067aa0ba902b7',
      flags: 1,
    });
    for (const bad of [
      undefined,
      '',
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `00-${TRACE.toUpperCase()}-00f067aa0ba902b7-01`,
    ]) {
      expect(parseTraceparent(bad)).toBeNull();
      expect(callTrace(TRACE, { traceparent: bad }).parent).toBeNull();
    }
    expect(isValidTraceId(TRACE)).toBe(true);
    expect(isValidTraceId('0'.repeat(32))).toBe(false);
  });

  it("keeps the event's trace id, makes a new span, and keeps the sampled flag and tracestate of the same trace", () => {
    const trace = callTrace(
      TRACE,
      { traceparent: `00-${TRACE}-00f067aa0ba902b7-00`, tracestate: 'vendor=1' },
      (n) => 'ab'.repeat(n),
    );
    expect(trace.traceId).toBe(TRACE);
    expect(trace.headers).toEqual({ traceparent: `00-${TRACE}-abababababababab-00`, tracestate: 'vendor=1' });
  });

  it('falls back to the header trace id, then to a fresh one, when the event has no valid id', () => {
    expect(callTrace('nope', { traceparent: `00-${OTHER}-00f067aa0ba902b7-01` }).traceId).toBe(OTHER);
    const fresh = callTrace('', {});
    expect(isValidTraceId(fresh.traceId)).toBe(true);
    expect(fresh.headers.traceparent).toMatch(new RegExp(`^00-${fresh.traceId}-[0-9a-f]{16}-01$`));
  });

  it('sets the sampled flag when the header belongs to another trace', () => {
    expect(callTrace(TRACE, { traceparent: `00-${OTHER}-00f067aa0ba902b7-00` }).headers.traceparent).toMatch(
      /-01$/,
    );
  });

  it("outputs of a traced run are children of the call span, with the request's tracestate", () => {
    const trace = callTrace(TRACE, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01`, tracestate: 'v=2' });
    expect(outputHeaders(trace, { traceId: TRACE, spanId: 'cdcdcdcdcdcdcdcd', flags: 1 })).toEqual({
      traceparent: `00-${TRACE}-cdcdcdcdcdcdcdcd-01`,
      tracestate: 'v=2',
    });
    expect(outputHeaders(trace, undefined)).toBe(trace.headers);
  });
});
