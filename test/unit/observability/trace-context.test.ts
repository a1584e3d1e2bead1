import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  childSpanId,
  formatTraceparent,
  newTraceId,
  parseTraceparent,
  randomHex,
  readTraceContext,
  traceHeaders,
} from '../../../libs/observability/trace-context.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('parses the W3C example and formats it back', () => {
    const header = `00-${TRACE}-${SPAN}-01`;
    const parsed = parseTraceparent(header);
    expect(parsed).toEqual({ traceId: TRACE, spanId: SPAN, flags: 1 });
    expect(formatTraceparent(parsed!)).toBe(header);
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.flags).toBe(0);
  });

  it.each([
    ['absent', undefined],
    ['not a string', 42],
    ['empty', ''],
    ['uppercase hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with extra fields', `00-${TRACE}-${SPAN}-01-extra`],
    ['short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['long span id', `00-${TRACE}-${SPAN}0-01`],
    ['one-digit flags', `00-${TRACE}-${SPAN}-1`],
    ['non-hex', `00-${TRACE.replace('4', 'g')}-${SPAN}-01`],
    ['wrong separators', `00_${TRACE}_${SPAN}_01`],
    ['huge', `00-${TRACE}-${SPAN}-01${' '.repeat(600)}`],
  ])('invalid (%s) → null', (_why, header) => {
    expect(parseTraceparent(header)).toBeNull();
  });

  it('a later version is read by its first four fields', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-03-what-comes-next`)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      flags: 3,
    });
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-03x`)).toBeNull();
  });

  it('never throws, and what parses formats back to a header that parses to the same thing', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[0-9a-f-]{50,60}$/), fc.anything()), (input) => {
        const parsed = parseTraceparent(input);
        if (parsed !== null) expect(parseTraceparent(formatTraceparent(parsed))).toEqual(parsed);
      }),
      { numRuns: 500 },
    );
  });

  it('formatting invalid ids throws; building headers from them yields no header', () => {
    expect(() => formatTraceparent({ traceId: 'nope', spanId: SPAN, flags: 1 })).toThrow(RangeError);
    expect(() => formatTraceparent({ traceId: TRACE, spanId: SPAN, flags: 256 })).toThrow(RangeError);
    expect(traceHeaders('nope', SPAN)).toEqual({});
  });
});

describe('ids and bus headers', () => {
  it('fresh ids are valid and never all zeros, even from a zero random source', () => {
    const zeros = (n: number) => '00'.repeat(n);
    expect(newTraceId(zeros)).toMatch(/^0{31}1$/);
    expect(childSpanId(zeros)).toMatch(/^0{15}1$/);
    expect(newTraceId()).toMatch(/^[0-9a-f]{32}$/);
    expect(childSpanId()).not.toBe(childSpanId());
  });

  it('random hex comes in the asked length and never repeats across pool refills', () => {
    // 20,000 span ids draw 160,000 bytes: about 40 refills of the 4 KiB pool, at odd offsets too.
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i += 1) {
      const id = randomHex(i % 3 === 0 ? 16 : 8);
      expect(id).toMatch(i % 3 === 0 ? /^[0-9a-f]{32}$/ : /^[0-9a-f]{16}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(20_000);
    expect(randomHex(0)).toBe('');
    expect(randomHex(4096)).toMatch(/^[0-9a-f]{8192}$/);
    expect(() => randomHex(4097)).toThrow(RangeError);
    expect(() => randomHex(-1)).toThrow(RangeError);
  });

  it('headers written for a message are read back from it (sampled by default)', () => {
    const headers = traceHeaders(TRACE, SPAN);
    expect(headers).toEqual({ traceparent: `00-${TRACE}-${SPAN}-01` });
    expect(readTraceContext({ ...headers, other: 'x' })).toEqual({ traceId: TRACE, spanId: SPAN, flags: 1 });
    expect(readTraceContext(traceHeaders(TRACE, SPAN, 0))?.flags).toBe(0);
  });

  it('reads a capitalized header name; missing or invalid → null', () => {
    expect(readTraceContext({ Traceparent: `00-${TRACE}-${SPAN}-01` })?.traceId).toBe(TRACE);
    expect(readTraceContext({})).toBeNull();
    expect(readTraceContext(undefined)).toBeNull();
    expect(readTraceContext({ traceparent: 'garbage' })).toBeNull();
  });
});
