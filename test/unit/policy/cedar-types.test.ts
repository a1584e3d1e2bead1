import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  cedarTypeOf,
  commonType,
  decimalText,
  decimalValue,
  schemaTypeJson,
  toCedarValue,
  toUnits,
  unitsText,
  type CedarType,
} from '../../../libs/policy/cedar-types.js';
import { inputJsonSchema } from '../../../libs/registry/input-json-schema.js';
import { policyTool } from './policy-tools.js';

const STRING: CedarType = { type: 'String' };
const LONG: CedarType = { type: 'Long' };
const BOOLEAN: CedarType = { type: 'Boolean' };
const DECIMAL: CedarType = { type: 'Extension', name: 'decimal' };
const setOf = (element: CedarType): CedarType => ({ type: 'Set', element });

describe('fixed-point units', () => {
  it.each([
    [49.99, 499_900],
    [-0.0001, -1],
    [0.0001, 1],
    [0, 0],
    [1, 10_000],
    [12_345.6789, 123_456_789],
    [-20, -200_000],
    [9e11, 9e15],
  ])('toUnits(%d) = %d, exactly', (value, units) => {
    expect(toUnits(value)).toBe(units);
    expect(units / 10_000).toBe(value);
  });

  it.each([
    ['five places', 1e-5],
    ['five places, rounding to a whole unit', 49.99999],
    ['a sum that is not what it looks like', 0.1 + 0.2],
    ['units beyond a safe integer', 1e12],
    ['huge', 1e300],
    ['NaN', Number.NaN],
    ['infinity', Number.POSITIVE_INFINITY],
    ['minus infinity', Number.NEGATIVE_INFINITY],
  ])('toUnits refuses %s', (_label, value) => {
    expect(toUnits(value)).toBeUndefined();
    expect(decimalText(value)).toBeUndefined();
  });

  it.each([
    [499_900, '49.9900'],
    [-5, '-0.0005'],
    [0, '0.0000'],
    [1, '0.0001'],
    [10_000, '1.0000'],
    [-123_456_789, '-12345.6789'],
    [1_000_000, '100.0000'],
  ])('unitsText(%d) = %s', (units, text) => {
    expect(unitsText(units)).toBe(text);
  });

  it('decimalText writes a number as Cedar decimal text; decimalValue wraps it for Cedar', () => {
    expect(decimalText(49.99)).toBe('49.9900');
    expect(decimalText(-0.0001)).toBe('-0.0001');
    expect(decimalText(1.5)).toBe('1.5000');
    expect(decimalValue('1.5000')).toEqual({ __extn: { fn: 'decimal', arg: '1.5000' } });
  });
});

describe('cedarTypeOf', () => {
  it('types the JSON Schema zod emits for a tool input', () => {
    const tool = policyTool(
      'typed',
      z.strictObject({
        text: z.string(),
        count: z.int(),
        amount: z.number(),
        flag: z.boolean(),
        tags: z.array(z.string()),
        items: z.array(z.object({ sku: z.string(), qty: z.int().optional() })),
        kind: z.enum(['a', 'b']),
        fixed: z.literal('k'),
        maybe: z.string().optional(),
        nullable: z.number().nullable(),
        nullish: z.int().nullish(),
        mixed: z.union([z.string(), z.number()]),
        pair: z.tuple([z.string(), z.number()]),
        map: z.record(z.string(), z.number()),
        anything: z.any(),
        nested: z.object({ inner: z.object({ deep: z.boolean() }) }).optional(),
      }),
    );
    expect(cedarTypeOf(inputJsonSchema(tool))).toEqual({
      type: 'Record',
      attributes: {
        text: { ...STRING, required: true },
        count: { ...LONG, required: true },
        amount: { ...DECIMAL, required: true },
        flag: { ...BOOLEAN, required: true },
        tags: { ...setOf(STRING), required: true },
        items: {
          ...setOf({
            type: 'Record',
            attributes: { sku: { ...STRING, required: true }, qty: { ...LONG, required: false } },
          }),
          required: true,
        },
        kind: { ...STRING, required: true },
        fixed: { ...STRING, required: true },
        maybe: { ...STRING, required: false },
        nullable: { ...DECIMAL, required: false },
        nullish: { ...LONG, required: false },
        nested: {
          type: 'Record',
          attributes: {
            inner: { type: 'Record', attributes: { deep: { ...BOOLEAN, required: true } }, required: true },
          },
          required: false,
        },
      },
    });
  });

  it.each([
    ['a string enum without a type', { enum: ['a', 'b'] }, STRING],
    ['a string const without a type', { const: 'k' }, STRING],
    ['a nullable string via anyOf', { anyOf: [{ type: 'string' }, { type: 'null' }] }, STRING],
    ['a nullable integer via a type list', { type: ['integer', 'null'] }, LONG],
    ['an anyOf of one type', { anyOf: [{ type: 'number' }, { type: 'number', minimum: 1 }] }, DECIMAL],
    [
      'an array of arrays',
      { type: 'array', items: { type: 'array', items: { type: 'boolean' } } },
      setOf(setOf(BOOLEAN)),
    ],
    ['an object without properties', { type: 'object', properties: {} }, { type: 'Record', attributes: {} }],
  ])('types %s', (_label, schema, type) => {
    expect(cedarTypeOf(schema)).toEqual(type);
  });

  it.each([
    ['a mixed anyOf', { anyOf: [{ type: 'string' }, { type: 'number' }] }],
    ['a mixed type list', { type: ['string', 'integer'] }],
    ['null only', { type: 'null' }],
    ['an anyOf of null only', { anyOf: [{ type: 'null' }] }],
    ['an enum that is not all strings', { enum: ['a', 1] }],
    ['a const that is not a string', { const: 3 }],
    ['a tuple', { type: 'array', prefixItems: [{ type: 'string' }], items: false }],
    [
      'an array of untypeable items',
      { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
    ],
    ['an array without items', { type: 'array' }],
    ['a map', { type: 'object', additionalProperties: { type: 'number' } }],
    ['any', {}],
    ['an unknown type', { type: 'date' }],
    ['not a schema', 'string'],
    ['null', null],
  ])('leaves out %s', (_label, schema) => {
    expect(cedarTypeOf(schema)).toBeUndefined();
  });

  it('leaves an untypeable property out of its record, and makes a nullable one optional', () => {
    expect(
      cedarTypeOf({
        type: 'object',
        properties: {
          a: { type: 'string' },
          b: { anyOf: [{ type: 'string' }, { type: 'number' }] },
          c: {
            anyOf: [
              { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] },
              { type: 'null' },
            ],
          },
          d: { type: 'string', nullable: true },
        },
        required: ['a', 'b', 'c', 'd'],
      }),
    ).toEqual({
      type: 'Record',
      attributes: {
        a: { ...STRING, required: true },
        c: { type: 'Record', attributes: { x: { ...LONG, required: true } }, required: false },
        d: { ...STRING, required: true },
      },
    });
  });
});

describe('commonType', () => {
  it('keeps equal scalars and nothing else', () => {
    expect(commonType(STRING, STRING)).toEqual(STRING);
    expect(commonType(DECIMAL, DECIMAL)).toEqual(DECIMAL);
    expect(commonType(LONG, DECIMAL)).toBeUndefined();
    expect(commonType(STRING, BOOLEAN)).toBeUndefined();
    expect(commonType(STRING, setOf(STRING))).toBeUndefined();
    expect(commonType(setOf(LONG), setOf(LONG))).toEqual(setOf(LONG));
    expect(commonType(setOf(LONG), setOf(STRING))).toBeUndefined();
  });

  it('merges records: common attributes, required only where both require them', () => {
    const a: CedarType = {
      type: 'Record',
      attributes: {
        both: { ...STRING, required: true },
        halfRequired: { ...LONG, required: true },
        clash: { ...LONG, required: true },
        onlyA: { ...BOOLEAN, required: true },
      },
    };
    const b: CedarType = {
      type: 'Record',
      attributes: {
        both: { ...STRING, required: true },
        halfRequired: { ...LONG, required: false },
        clash: { ...STRING, required: true },
        onlyB: { ...DECIMAL, required: true },
      },
    };
    expect(commonType(a, b)).toEqual({
      type: 'Record',
      attributes: {
        both: { ...STRING, required: true },
        halfRequired: { ...LONG, required: false },
        onlyA: { ...BOOLEAN, required: false },
        onlyB: { ...DECIMAL, required: false },
      },
    });
  });
});

describe('schemaTypeJson', () => {
  it('writes a type as the Cedar schema JSON does', () => {
    const record: CedarType = {
      type: 'Record',
      attributes: { tags: { ...setOf(STRING), required: false }, amount: { ...DECIMAL, required: true } },
    };
    expect(schemaTypeJson(record, true)).toEqual({
      type: 'Record',
      required: true,
      attributes: {
        tags: { type: 'Set', element: { type: 'String' }, required: false },
        amount: { type: 'Extension', name: 'decimal', required: true },
      },
    });
    expect(schemaTypeJson(LONG)).toEqual({ type: 'Long' });
  });
});

describe('toCedarValue', () => {
  const record: CedarType = {
    type: 'Record',
    attributes: {
      text: { ...STRING, required: true },
      amount: { ...DECIMAL, required: false },
      count: { ...LONG, required: false },
      tags: { ...setOf(STRING), required: false },
      flag: { ...BOOLEAN, required: false },
    },
  };

  it('converts what fits its type', () => {
    expect(
      toCedarValue({ text: 'a', amount: 49.99, count: 3, tags: ['x'], flag: false, extra: 1 }, record),
    ).toEqual({
      text: 'a',
      amount: { __extn: { fn: 'decimal', arg: '49.9900' } },
      count: 3,
      tags: ['x'],
      flag: false,
    });
  });

  it('leaves out attributes that do not fit, and nulls', () => {
    expect(
      toCedarValue({ text: 7, amount: 1e-5, count: 2 ** 53, tags: ['x', 1], flag: null }, record),
    ).toEqual({});
    expect(toCedarValue({ text: 'a', count: 1.5 }, record)).toEqual({ text: 'a' });
  });

  it('is undefined for a value of the wrong kind', () => {
    expect(toCedarValue('a', LONG)).toBeUndefined();
    expect(toCedarValue(1, STRING)).toBeUndefined();
    expect(toCedarValue('true', BOOLEAN)).toBeUndefined();
    expect(toCedarValue('1', DECIMAL)).toBeUndefined();
    expect(toCedarValue('a', setOf(STRING))).toBeUndefined();
    expect(toCedarValue(['a'], record)).toBeUndefined();
    expect(toCedarValue(null, record)).toBeUndefined();
  });
});
