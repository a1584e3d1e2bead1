import { describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import { storableText, toStorableJson } from '../../../libs/audit/storable-json.js';

describe('storableText', () => {
  it('replaces NUL and unpaired surrogates, keeps valid pairs and other text', () => {
    expect(storableText('a\u0000b')).toBe('a\uFFFDb');
    expect(storableText('x\uD800y')).toBe('x\uFFFDy');
    expect(storableText('x\uDC00')).toBe('x\uFFFD');
    expect(storableText('\uDC00\uD800')).toBe('\uFFFD\uFFFD');
    expect(storableText('😀 ok é')).toBe('😀 ok é');
    expect(storableText('')).toBe('');
  });
});

describe('toStorableJson', () => {
  it('copies JSON data with cleaned strings and keys, keys in canonical order', () => {
    const input = { z: ['a\u0000', { 'k\uD800': 1 }], a: null, m: true };
    const out = toStorableJson(input) as Record<string, unknown>;
    expect(out).toEqual({ a: null, m: true, z: ['a\uFFFD', { 'k\uFFFD': 1 }] });
    expect(Object.keys(out)).toEqual(['a', 'm', 'z']);
    expect(input.z[0]).toBe('a\u0000');
  });

  it('keeps a "__proto__" key as data', () => {
    const out = toStorableJson(JSON.parse('{"__proto__": {"x": 1}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__']);
  });

  it('drops undefined properties and normalises -0', () => {
    expect(toStorableJson({ a: undefined, b: -0 })).toEqual({ b: 0 });
    expect(Object.is((toStorableJson({ b: -0 }) as { b: number }).b, 0)).toBe(true);
  });

  it('refuses what is not JSON data', () => {
    for (const bad of [{ a: NaN }, { d: new Date(0) }, [undefined], { n: 1n }]) {
      expect(() => toStorableJson(bad)).toThrow(ToolgateError);
    }
  });
});
