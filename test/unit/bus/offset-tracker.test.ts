import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OffsetTracker } from '../../../libs/bus/offset-tracker.js';

/** Strictly increasing offsets with random gaps (compaction, transaction markers). */
const offsetsArb = fc
  .tuple(
    fc.bigInt({ min: 0n, max: 2n ** 62n }),
    fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 60 }),
  )
  .map(([start, gaps]) => {
    let current = start;
    return gaps.map((gap, i) => {
      if (i > 0) current += BigInt(gap);
      return String(current);
    });
  });

/** Offsets plus a random order in which they finish (some may never finish). */
const scenarioArb = offsetsArb.chain((offsets) =>
  fc.record({
    offsets: fc.constant(offsets),
    order: fc.shuffledSubarray(offsets, { minLength: 0, maxLength: offsets.length }),
    complete: fc.boolean(),
  }),
);

describe('OffsetTracker', () => {
  it('never lets the position pass an unfinished offset, and reaches last + 1 when all finish', () => {
    fc.assert(
      fc.property(scenarioArb, ({ offsets, order, complete }) => {
        const tracker = new OffsetTracker(offsets);
        const finishing = complete ? [...order, ...offsets.filter((o) => !order.includes(o))] : order;
        const finished = new Set<string>();
        let previous = BigInt(tracker.position());
        for (const offset of finishing) {
          tracker.markDone(offset);
          finished.add(offset);
          const position = BigInt(tracker.position());
          // Safety: everything below the position is finished (so a crash loses nothing) ...
          for (const o of offsets) {
            if (!finished.has(o)) expect(position).toBeLessThanOrEqual(BigInt(o));
          }
          // ... and the position is the lowest unfinished offset: never more conservative than needed.
          const lowest = offsets.find((o) => !finished.has(o));
          expect(tracker.lowestUnfinished()).toBe(lowest);
          // Monotone.
          expect(position).toBeGreaterThanOrEqual(previous);
          previous = position;
        }
        if (finished.size === offsets.length) {
          expect(tracker.isComplete()).toBe(true);
          expect(tracker.position()).toBe(String(BigInt(offsets.at(-1)!) + 1n));
          expect(tracker.lastFinishedInPrefix()).toBe(offsets.at(-1));
        }
        expect(tracker.finishedCount()).toBe(finished.size);
      }),
    );
  });

  it('reports an advance exactly when the position moves', () => {
    fc.assert(
      fc.property(scenarioArb, ({ offsets, order }) => {
        const tracker = new OffsetTracker(offsets);
        for (const offset of order) {
          const before = tracker.position();
          const advanced = tracker.markDone(offset);
          expect(advanced).toBe(tracker.position() !== before);
        }
      }),
    );
  });

  it('treats a repeated mark as a no-op', () => {
    const tracker = new OffsetTracker(['5', '6', '7']);
    expect(tracker.markDone('6')).toBe(false);
    expect(tracker.markDone('5')).toBe(true);
    expect(tracker.position()).toBe('7');
    expect(tracker.markDone('5')).toBe(false);
    expect(tracker.markDone('6')).toBe(false);
    expect(tracker.finishedCount()).toBe(2);
  });

  it('uses the explicit end offset once complete (trailing control records)', () => {
    const tracker = new OffsetTracker(['10', '12'], '15');
    tracker.markDone('12');
    expect(tracker.position()).toBe('10');
    expect(tracker.lastFinishedInPrefix()).toBeUndefined();
    tracker.markDone('10');
    expect(tracker.position()).toBe('15');
  });

  it('refuses foreign offsets, unordered input and bad end offsets', () => {
    const tracker = new OffsetTracker(['1', '2']);
    expect(() => tracker.markDone('3')).toThrow(RangeError);
    expect(() => new OffsetTracker(['2', '1'])).toThrow(RangeError);
    expect(() => new OffsetTracker(['1', '1'])).toThrow(RangeError);
    expect(() => new OffsetTracker(['-1'])).toThrow(RangeError);
    expect(() => new OffsetTracker(['4'], '4')).toThrow(RangeError);
    expect(() => new OffsetTracker([])).toThrow(RangeError);
    expect(new OffsetTracker([], '9').position()).toBe('9');
  });

  it('handles offsets beyond 2^53 exactly', () => {
    const big = '9007199254740993';
    const tracker = new OffsetTracker([big]);
    tracker.markDone(big);
    expect(tracker.position()).toBe('9007199254740994');
  });
});
