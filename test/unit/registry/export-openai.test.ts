import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../libs/registry/define-tool.js';
import { ToolDefinitionError } from '../../../libs/registry/definition-error.js';
import { toOpenAITools } from '../../../libs/registry/export-openai.js';
import { toStrictJsonSchema } from '../../../libs/registry/strict-schema.js';
import { ORDER_ID_JSON_SCHEMA, sampleTools } from './sample-tools.js';

function toolWith(input: z.ZodObject) {
  return defineTool({
    name: 'probe',
    version: '1.0.0',
    description: 'Probe.',
    input,
    output: z.object({}),
    scopes: [],
    owner: 'test',
    stateChanging: false,
    execute: () => Promise.resolve({}),
  });
}

function strictParams(input: z.ZodObject) {
  return toOpenAITools([toolWith(input)], { strict: true })[0]!.function.parameters;
}

describe('toOpenAITools', () => {
  it('builds chat-completions function tools in the given order', () => {
    const s = sampleTools();
    const tools = toOpenAITools([s.lookupOrder, s.issueRefundV2], { strict: true });
    expect(tools.map((t) => [t.type, t.function.name, t.function.strict])).toEqual([
      ['function', 'lookup_order', true],
      ['function', 'issue_refund', true],
    ]);
    expect(tools[0]!.function.description).toBe(s.lookupOrder.description);
  });

  it('exports the strict form of issue_refund v2 exactly', () => {
    const { issueRefundV2 } = sampleTools();
    expect(toOpenAITools([issueRefundV2], { strict: true })[0]!.function.parameters).toEqual({
      type: 'object',
      properties: {
        order_id: ORDER_ID_JSON_SCHEMA,
        amount: {
          type: 'number',
          exclusiveMinimum: 0,
          maximum: 10000,
          description: 'Refund amount in USD, positive, at most 10000; above 50 needs a manager.',
        },
        reason: {
          type: 'string',
          enum: ['damaged', 'late', 'wrong_item', 'other'],
          description: 'Why the customer is refunded.',
        },
        note: {
          type: ['string', 'null'],
          description: 'Free text for the payments team. At most 500 characters.',
        },
      },
      required: ['order_id', 'amount', 'reason', 'note'],
      additionalProperties: false,
    });
  });

  it('keeps optionality and all constraints when not strict', () => {
    const { issueRefundV2 } = sampleTools();
    const tool = toOpenAITools([issueRefundV2], { strict: false })[0]!;
    expect(tool.function.strict).toBe(false);
    const params = tool.function.parameters as { required: string[]; properties: Record<string, object> };
    expect(params.required).toEqual(['order_id', 'amount', 'reason']);
    expect(params.properties.note).toEqual({
      type: 'string',
      maxLength: 500,
      description: 'Free text for the payments team.',
    });
    expect(params).not.toHaveProperty('$schema');
  });

  it('makes optional fields nullable: type unions for primitives, anyOf for the rest', () => {
    const params = strictParams(
      z.object({
        text: z.string().optional(),
        level: z.enum(['a', 'b']).optional(),
        obj: z.object({ x: z.int() }).optional(),
        list: z.array(z.string()).optional(),
        already: z.string().nullable(),
      }),
    );
    expect(params.properties).toEqual({
      text: { type: ['string', 'null'] },
      level: { anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'null' }] },
      obj: {
        anyOf: [
          {
            type: 'object',
            properties: { x: { type: 'integer' } },
            required: ['x'],
            additionalProperties: false,
          },
          { type: 'null' },
        ],
      },
      list: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }] },
      already: { type: ['string', 'null'] },
    });
    expect(params.required).toEqual(['text', 'level', 'obj', 'list', 'already']);
  });

  it('moves constraints strict mode cannot carry into the description, and keeps supported ones', () => {
    const params = strictParams(
      z.object({
        code: z.string().min(2).max(8).describe('Promo code.'),
        exact: z.string().length(4),
        site: z.url(),
        at: z.iso.datetime(),
        id: z.uuid(),
        tags: z.array(z.string()).min(1).max(5),
        pct: z.number().gt(0).lte(100).multipleOf(0.5),
        page: z.int().min(1).default(1),
      }),
    ) as { properties: Record<string, Record<string, unknown>> };
    expect(params.properties.code).toEqual({
      type: 'string',
      description: 'Promo code. Length 2-8 characters.',
    });
    expect(params.properties.exact).toEqual({ type: 'string', description: 'Exactly 4 characters.' });
    expect(params.properties.site).toEqual({ type: 'string', description: 'Format: uri.' });
    expect(params.properties.at).toEqual({ type: 'string', format: 'date-time' });
    expect(params.properties.id).toEqual({ type: 'string', format: 'uuid' });
    expect(params.properties.tags).toEqual({
      type: 'array',
      items: { type: 'string' },
      minItems: 1,
      maxItems: 5,
    });
    expect(params.properties.pct).toEqual({
      type: 'number',
      exclusiveMinimum: 0,
      maximum: 100,
      multipleOf: 0.5,
    });
    expect(params.properties.page).toEqual({
      type: ['integer', 'null'],
      minimum: 1,
      description: 'Defaults to 1 when null.',
    });
  });

  it('rewrites oneOf (discriminated unions) to anyOf and closes every branch', () => {
    const params = strictParams(
      z.object({
        target: z.discriminatedUnion('kind', [
          z.object({ kind: z.literal('user'), user_id: z.string() }),
          z.object({ kind: z.literal('team'), team: z.string(), note: z.string().optional() }),
        ]),
      }),
    ) as { properties: { target: { anyOf: Record<string, unknown>[] } } };
    const branches = params.properties.target.anyOf;
    expect(params.properties.target).not.toHaveProperty('oneOf');
    expect(branches).toHaveLength(2);
    expect(branches[1]).toEqual({
      type: 'object',
      properties: {
        kind: { type: 'string', const: 'team' },
        team: { type: 'string' },
        note: { type: ['string', 'null'] },
      },
      required: ['kind', 'team', 'note'],
      additionalProperties: false,
    });
  });

  it('keeps recursive references and closes loose objects', () => {
    const node = z.object({
      name: z.string(),
      get children(): z.ZodOptional<z.ZodArray<typeof node>> {
        return z.array(node).optional();
      },
    });
    const params = strictParams(node);
    expect(params.properties).toEqual({
      name: { type: 'string' },
      children: { anyOf: [{ type: 'array', items: { $ref: '#' } }, { type: 'null' }] },
    });
    expect(strictParams(z.looseObject({ a: z.string() })).additionalProperties).toBe(false);
  });

  it.each([
    ['a record', z.object({ labels: z.record(z.string(), z.string()) }), 'open-ended object'],
    ['a tuple', z.object({ point: z.tuple([z.number(), z.number()]) }), 'tuples are not supported'],
    ['an unconstrained value', z.object({ blob: z.unknown() }), 'unconstrained value'],
  ])('refuses %s in strict mode with a definition error naming the path', (_label, input, message) => {
    const tool = toolWith(input);
    expect(() => toOpenAITools([tool], { strict: true })).toThrow(ToolDefinitionError);
    expect(() => toOpenAITools([tool], { strict: true })).toThrow(message);
    expect(() => toOpenAITools([tool], { strict: true })).toThrow('#/properties/');
    expect(() => toOpenAITools([tool], { strict: false })).not.toThrow();
  });

  it('inlines a single-branch allOf and refuses a multi-branch one', () => {
    const branch = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
    const one = { type: 'object', properties: { x: { allOf: [branch] } }, required: ['x'] };
    expect(toStrictJsonSchema(one, 'probe')).toEqual({
      type: 'object',
      properties: { x: { ...branch, additionalProperties: false } },
      required: ['x'],
      additionalProperties: false,
    });
    const two = { type: 'object', properties: { x: { allOf: [branch, branch] } }, required: ['x'] };
    expect(() => toStrictJsonSchema(two, 'probe')).toThrow('#/properties/x: allOf (an intersection)');
  });

  it('refuses a root that is not an object', () => {
    expect(() => toStrictJsonSchema({ type: 'array', items: { type: 'string' } }, 'probe')).toThrow(
      'the root schema must be an object',
    );
  });

  it('refuses a list that names a tool twice', () => {
    const { issueRefundV1, issueRefundV2 } = sampleTools();
    expect(() => toOpenAITools([issueRefundV1, issueRefundV2], { strict: false })).toThrow(/names it twice/);
  });

  it('returns fresh tool objects but does not let callers corrupt the cached schema', () => {
    const { lookupOrder } = sampleTools();
    const a = toOpenAITools([lookupOrder], { strict: true })[0]!;
    const b = toOpenAITools([lookupOrder], { strict: true })[0]!;
    expect(a).not.toBe(b);
    expect(a).toEqual(b);
    expect(() => {
      (a.function.parameters as Record<string, unknown>).type = 'array';
    }).toThrow(TypeError);
  });
});
