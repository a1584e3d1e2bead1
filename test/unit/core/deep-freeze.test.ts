import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../libs/core/deep-freeze.js';

describe('deepFreeze', () => {
  it('freezes the value and every object and array reachable from it, and returns the same value', () => {
    const value = { a: { b: [1, { c: 'x' }] }, d: 'y' };
    const frozen = deepFreeze(value);
    expect(frozen).toBe(value);
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.a)).toBe(true);
    expect(Object.isFrozen(value.a.b)).toBe(true);
    expect(Object.isFrozen(value.a.b[1])).toBe(true);
    expect(() => {
      (value.a.b[1] as { c: string }).c = 'changed';
    }).toThrow(TypeError);
  });

  it('terminates on a cyclic value', () => {
    const node: { self?: unknown; list: unknown[] } = { list: [] };
    node.self = node;
    node.list.push(node);
    deepFreeze(node);
    expect(Object.isFrozen(node)).toBe(true);
    expect(Object.isFrozen(node.list)).toBe(true);
  });

  it('does not enter an object that is already frozen', () => {
    const inner = { n: 1 };
    const outer = Object.freeze({ inner });
    deepFreeze({ outer });
    expect(Object.isFrozen(inner)).toBe(false);
  });

  it('returns primitives and null unchanged', () => {
    expect(deepFreeze(3)).toBe(3);
    expect(deepFreeze('s')).toBe('s');
    expect(deepFreeze(null)).toBeNull();
    expect(deepFreeze(undefined)).toBeUndefined();
  });
});
