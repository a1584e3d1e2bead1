import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, MAX_JSON_DEPTH, sha256Hex } from '../../../libs/core/canonical-json.js';
import { ToolgateError } from '../../../libs/core/errors.js';

function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v, i) => shuffleKeys(v, seed + i));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  // Deterministic permutation: rotate then reverse depending on the seed.
  const rotated = entries
    .slice(seed % (entries.length || 1))
    .concat(entries.slice(0, seed % (entries.length || 1)));
  const ordered = seed % 2 === 0 ? rotated.reverse() : rotated;
  const out: Record<string, unknown> = {};
  for (const [k, v] of ordered)
    Object.defineProperty(out, k, { value: shuffleKeys(v, seed + 1), enumerable: true });
  return out;
}

function expectRefused(value: unknown, fragment: string): void {
  let thrown: unknown;
  try {
    canonicalJson(value);
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(ToolgateError);
  expect((thrown as ToolgateError).code).toBe('SCHEMA_INVALID');
  expect((thrown as ToolgateError).message).toContain(fragment);
}

describe('canonicalJson', () => {
  it('matches the RFC 8785 examples for ordering and numbers', () => {
    expect(canonicalJson({ b: 2, a: 1, c: [3, { z: true, y: null }] })).toBe(
      '{"a":1,"b":2,"c":[3,{"y":null,"z":true}]}',
    );
    // Keys sort by UTF-16 code units, not by locale: "\u20ac" (€) sorts before "\ud83d\ude00" (😀).
    expect(canonicalJson({ '😀': 1, '€': 2, '\r': 3, '1': 4 })).toBe('{"\\r":3,"1":4,"€":2,"😀":1}');
    expect(canonicalJson([1e21, 1e-7, 0.1, -0, Number('333333333.33333329')])).toBe(
      '[1e+21,1e-7,0.1,0,333333333.3333333]',
    );
    expect(canonicalJson('a"b\\c\u0001')).toBe('"a\\"b\\\\c\\u0001"');
  });

  it('omits undefined-valued properties like JSON.stringify', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe(canonicalJson({ a: 1 }));
  });

  it('keeps a "__proto__" key from JSON.parse as data', () => {
    const parsed: unknown = JSON.parse('{"__proto__":{"admin":true},"a":1}');
    expect(canonicalJson(parsed)).toBe('{"__proto__":{"admin":true},"a":1}');
  });

  it('refuses values with no faithful JSON encoding', () => {
    expectRefused(undefined, 'undefined at $');
    expectRefused([1, undefined], 'undefined at $[1]');
    // eslint-disable-next-line no-sparse-arrays
    expectRefused([1, , 3], 'array hole at $[1]');
    expectRefused({ a: NaN }, 'NaN at $.a');
    expectRefused({ a: { b: Infinity } }, 'Infinity at $.a.b');
    expectRefused({ n: 10n }, 'BigInt at $.n');
    expectRefused({ f: () => 1 }, 'function at $.f');
    expectRefused({ s: Symbol('x') }, 'symbol at $.s');
    expectRefused({ d: new Date(0) }, 'not plain data at $.d');
    expectRefused({ m: new Map() }, 'not plain data at $.m');
    expectRefused({ [Symbol('k')]: 1 }, 'symbol-keyed property');
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expectRefused(cyclic, 'cycle at $.self');
  });

  it('accepts shared (non-cyclic) references', () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it('refuses nesting deeper than the limit, and getters that throw, as SCHEMA_INVALID', () => {
    let deep: unknown = 1;
    for (let i = 0; i <= MAX_JSON_DEPTH; i++) deep = [deep];
    expectRefused(deep, 'nesting deeper');
    const hostile = Object.defineProperty({}, 'x', {
      enumerable: true,
      get: () => {
        throw new Error('secret');
      },
    });
    expectRefused(hostile, 'cannot be read as JSON');
  });

  it('reads each getter once, so what is checked is what is encoded', () => {
    let reads = 0;
    const flaky = Object.defineProperty({}, 'v', {
      enumerable: true,
      get: () => (reads++ === 0 ? 1 : NaN),
    });
    expect(canonicalJson(flaky)).toBe('{"v":1}');
    expect(reads).toBe(1);
  });

  it('round-trips JSON data and ignores key order (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), (value, seed) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
        expect(canonicalJson(shuffleKeys(value, seed))).toBe(text);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });

  it('never throws anything but a ToolgateError (property)', () => {
    fc.assert(
      fc.property(
        fc.anything({ withBigInt: true, withMap: true, withDate: true, withSparseArray: true }),
        (v) => {
          try {
            expect(typeof canonicalJson(v)).toBe('string');
          } catch (err) {
            expect(err).toBeInstanceOf(ToolgateError);
            expect((err as ToolgateError).code).toBe('SCHEMA_INVALID');
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('sha256Hex', () => {
  it('hashes the UTF-8 bytes', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('€')).toBe(
      createHash('sha256')
        .update(Buffer.from([0xe2, 0x82, 0xac]))
        .digest('hex'),
    );
  });
});

describe('canonicalJson: plain data and what a refusal says', () => {
  it('accepts an object without a prototype, as plain data', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 2, a: 1 });
    expect(canonicalJson({ x: bare })).toBe('{"x":{"a":1,"b":2}}');
  });

  it('keeps the thrown value as the cause when the input cannot be read', () => {
    const secret = new Error('secret');
    const hostile = Object.defineProperty({}, 'x', {
      enumerable: true,
      get: () => {
        throw secret;
      },
    });
    let thrown: unknown;
    try {
      canonicalJson(hostile);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({
      code: 'SCHEMA_INVALID',
      message: 'The value cannot be read as JSON data.',
    });
    expect((thrown as ToolgateError).cause).toBe(secret);
  });

  it('shows a path of up to 200 characters whole, and cuts a longer one with a visible mark', () => {
    const fits = `$.${'k'.repeat(198)}`;
    expectRefused({ ['k'.repeat(198)]: 10n }, `Not JSON data: a BigInt at ${fits}.`);
    const long = 'k'.repeat(199);
    expectRefused({ [long]: 10n }, `Not JSON data: a BigInt at $.${'k'.repeat(198)}….`);
  });
});
