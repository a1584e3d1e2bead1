import { describe, expect, it } from 'vitest';
import { applyCheck } from '../../../libs/policy/policy-check.js';

/**
 * One check against one present value. The promise: the bounds are inclusive, a deny-list refuses
 * each of its values, and a value the check cannot compare is a violation (fail closed).
 */
describe('applyCheck: max and min are inclusive bounds on finite numbers', () => {
  it('max allows the limit itself and refuses anything above it', () => {
    expect(applyCheck({ max: 50 }, 50)).toEqual({ violated: false, shown: 50, limit: '50' });
    expect(applyCheck({ max: 50 }, 49.99).violated).toBe(false);
    expect(applyCheck({ max: 50 }, 50.01)).toEqual({ violated: true, shown: 50.01, limit: '50' });
  });

  it('min allows the limit itself and refuses anything below it', () => {
    expect(applyCheck({ min: 1 }, 1)).toEqual({ violated: false, shown: 1, limit: '1' });
    expect(applyCheck({ min: 1 }, 1.5).violated).toBe(false);
    expect(applyCheck({ min: 1 }, 0.99)).toEqual({ violated: true, shown: 0.99, limit: '1' });
  });

  it.each([
    ['50'],
    [Number.NaN],
    [Number.POSITIVE_INFINITY],
    [Number.NEGATIVE_INFINITY],
    [true],
    [{}],
    [[1]],
  ])('a value %j that is not a finite number violates both max and min', (value) => {
    expect(applyCheck({ max: 50 }, value)).toEqual({ violated: true, shown: value, limit: '50' });
    expect(applyCheck({ min: 1 }, value)).toEqual({ violated: true, shown: value, limit: '1' });
  });
});

describe('applyCheck: oneOf and noneOf compare literals exactly', () => {
  it('oneOf allows each listed value and refuses any other, with the list as the limit', () => {
    const check = { oneOf: ['US', 'CA', 3] };
    for (const value of ['US', 'CA', 3]) expect(applyCheck(check, value).violated).toBe(false);
    expect(applyCheck(check, 'MX')).toEqual({ violated: true, shown: 'MX', limit: 'US, CA, 3' });
    // Exact comparison: no case folding, no string-number coercion.
    expect(applyCheck(check, 'us').violated).toBe(true);
    expect(applyCheck(check, '3').violated).toBe(true);
  });

  it('noneOf refuses each listed value (not only when all match) and allows any other', () => {
    const check = { noneOf: ['KP', 'IR'] };
    expect(applyCheck(check, 'KP')).toEqual({ violated: true, shown: 'KP', limit: 'KP, IR' });
    expect(applyCheck(check, 'IR').violated).toBe(true);
    expect(applyCheck(check, 'US')).toEqual({ violated: false, shown: 'US', limit: 'KP, IR' });
    expect(applyCheck({ noneOf: [false] }, 'false').violated).toBe(false);
  });
});

describe('applyCheck: maxItems counts array items', () => {
  it('allows exactly maxItems items and refuses one more, showing the count', () => {
    expect(applyCheck({ maxItems: 2 }, ['a', 'b'])).toEqual({ violated: false, shown: 2, limit: '2' });
    expect(applyCheck({ maxItems: 2 }, ['a', 'b', 'c'])).toEqual({ violated: true, shown: 3, limit: '2' });
    expect(applyCheck({ maxItems: 0 }, []).violated).toBe(false);
  });

  it.each([['abc'], [3], [{ length: 1 }]])('a non-array %j fails closed, shown as itself', (value) => {
    expect(applyCheck({ maxItems: 5 }, value)).toEqual({ violated: true, shown: value, limit: '5' });
  });
});
