import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import { assertSameCallIds } from '../../../libs/providers/index.js';

const r = (callId: string): { callId: string } => ({ callId });

function thrown(fn: () => void): ToolgateError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ToolgateError);
    return err as ToolgateError;
  }
  throw new Error('expected a throw');
}

describe('assertSameCallIds', () => {
  it('accepts an exact answer in any order, including an empty turn', () => {
    expect(() => assertSameCallIds(['a', 'b', 'c'], [r('c'), r('a'), r('b')])).not.toThrow();
    expect(() => assertSameCallIds([], [])).not.toThrow();
  });

  it('names missing, extra and duplicate ids in one INTERNAL error', () => {
    const err = thrown(() => assertSameCallIds(['a', 'b', 'c'], [r('a'), r('a'), r('x')]));
    expect(err.code).toBe('INTERNAL');
    expect(err.message).toContain('missing results for "b", "c"');
    expect(err.message).toContain('results for unrequested calls "x"');
    expect(err.message).toContain('more than one result for "a"');
  });

  it('refuses duplicate requested ids, which cannot each be answered', () => {
    const err = thrown(() => assertSameCallIds(['a', 'a'], [r('a'), r('a')]));
    expect(err.message).toContain('call ids requested more than once "a"');
  });

  it('keeps the message short when many ids are wrong', () => {
    const ids = Array.from({ length: 25 }, (_, i) => `call_${i}`);
    const err = thrown(() => assertSameCallIds(ids, []));
    expect(err.message).toContain('and 15 more');
    expect(err.message).not.toContain('call_24');
  });

  it('passes exactly when results are a permutation of unique requested ids (property)', () => {
    const scenario = fc.uniqueArray(fc.string({ maxLength: 4 }), { maxLength: 8 }).chain((requested) =>
      fc.tuple(
        fc.constant(requested),
        fc.oneof(
          fc.shuffledSubarray(requested, { minLength: requested.length }),
          fc.shuffledSubarray(requested),
          fc.array(fc.oneof(fc.constantFrom('', ...requested), fc.string({ maxLength: 4 })), {
            maxLength: 10,
          }),
        ),
      ),
    );
    fc.assert(
      fc.property(scenario, ([requested, answered]) => {
        const sorted = (ids: string[]): string => JSON.stringify([...ids].sort());
        const isPermutation = sorted(answered) === sorted(requested);
        let ok = true;
        try {
          assertSameCallIds(requested, answered.map(r));
        } catch {
          ok = false;
        }
        expect(ok).toBe(isPermutation);
      }),
    );
  });
});
