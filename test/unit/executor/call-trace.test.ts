import { describe, expect, it } from 'vitest';
import { callTrace, isTraceId, parseTraceparent } from '../../../services/executor/trace-context.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const OTHER = '0af7651916cd43dd8448eb211c80319c';

describe('trace context', () => {
  it('parses version-00 traceparent headers and refuses malformed or all-zero ones', () => {
    expect(parseTraceparent(`00-${TRACE}-00f067aa0ba902b7-01`)).toEqual({
      traceId: TRACE,
      parentSpanId: '00f067aa0ba902b7',
      flags: '01',
    });
    for (const bad of [
      undefined,
      '',
      `01-${TRACE}-00f067aa0ba902b7-01`,
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `00-${TRACE.toUpperCase()}-00f067aa0ba902b7-01`,
    ]) {
      expect(parseTraceparent(bad)).toBeUndefined();
    }
    expect(isTraceId(TRACE)).toBe(true);
    expect(isTraceId('0'.repeat(32))).toBe(false);
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
    expect(isTraceId(fresh.traceId)).toBe(true);
    expect(fresh.headers.traceparent).toMatch(new RegExp(`^00-${fresh.traceId}-[0-9a-f]{16}-01$`));
  });

  it('sets the sampled flag when the header belongs to another trace', () => {
    expect(callTrace(TRACE, { traceparent: `00-${OTHER}-00f067aa0ba902b7-00` }).headers.traceparent).toMatch(
      /-01$/,
    );
  });
});
