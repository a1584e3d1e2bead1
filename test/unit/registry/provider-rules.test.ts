import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../libs/registry/define-tool.js';
import { toAnthropicTools } from '../../../libs/registry/export-anthropic.js';
import { toOpenAITools } from '../../../libs/registry/export-openai.js';
import { checkAnthropicTool, checkOpenAIStrictTool } from '../../../libs/registry/provider-rules.js';
import { latestSampleTools, sampleTools } from './sample-tools.js';

/** A valid strict tool to break one rule at a time. */
function validStrict(): ChatCompletionFunctionTool {
  return {
    type: 'function',
    function: {
      name: 'create_purchase_order',
      description: 'Create a purchase order after the user confirmed vendor, items and total.',
      strict: true,
      parameters: {
        type: 'object',
        properties: {
          vendor_id: { type: 'string', description: "Vendor id, e.g. 'V-4471'." },
          line_items: {
            type: 'array',
            minItems: 1,
            items: {
              type: 'object',
              properties: {
                sku: { type: 'string' },
                quantity: { type: 'integer', minimum: 1 },
                unit_price_cents: { type: 'integer', minimum: 0 },
              },
              required: ['sku', 'quantity', 'unit_price_cents'],
              additionalProperties: false,
            },
          },
          currency: { type: 'string', enum: ['USD', 'EUR', 'GBP'] },
          notes: { type: ['string', 'null'] },
        },
        required: ['vendor_id', 'line_items', 'currency', 'notes'],
        additionalProperties: false,
      },
    },
  };
}

/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   these tests break plain JSON by hand, which needs untyped access. */
type Params = Record<string, any>;

function broken(edit: (params: Params, fn: Params) => void): ChatCompletionFunctionTool {
  const tool = validStrict();
  edit(tool.function.parameters!, tool.function);
  return tool;
}

function nested(depth: number): Params {
  let node: Params = {
    type: 'object',
    properties: { leaf: { type: 'string' } },
    required: ['leaf'],
    additionalProperties: false,
  };
  for (let i = 1; i < depth; i++) {
    node = { type: 'object', properties: { child: node }, required: ['child'], additionalProperties: false };
  }
  return node;
}

describe('checkOpenAIStrictTool', () => {
  it('accepts a hand-written valid strict tool', () => {
    expect(checkOpenAIStrictTool(validStrict())).toEqual([]);
  });

  it.each<[string, (p: Params, fn: Params) => void, string]>([
    [
      'a missing additionalProperties at the root',
      (p) => delete p.additionalProperties,
      '#: additionalProperties must be false.',
    ],
    [
      'additionalProperties: true in a nested object',
      (p) => (p.properties.line_items.items.additionalProperties = true),
      '#/properties/line_items/items: additionalProperties must be false.',
    ],
    [
      'a property not listed in required',
      (p) => (p.required = ['vendor_id', 'line_items', 'currency']),
      "#: property 'notes' is not listed in required.",
    ],
    [
      'a required name that is not a property',
      (p) => p.required.push('ghost'),
      '#: required names "ghost", which is not a property.',
    ],
    [
      'minLength',
      (p) => (p.properties.vendor_id.minLength = 3),
      "#/properties/vendor_id: unsupported keyword 'minLength'.",
    ],
    [
      'default',
      (p) => (p.properties.currency.default = 'USD'),
      "#/properties/currency: unsupported keyword 'default'.",
    ],
    [
      'allOf',
      (p) => (p.properties.vendor_id = { allOf: [{ type: 'string' }] }),
      "#/properties/vendor_id: unsupported keyword 'allOf'.",
    ],
    [
      'format uri',
      (p) => (p.properties.vendor_id.format = 'uri'),
      '#/properties/vendor_id: format "uri" is not supported.',
    ],
    ['an untyped value', (p) => (p.properties.vendor_id = {}), '#/properties/vendor_id: has no type'],
    [
      'tuple items',
      (p) => (p.properties.line_items.items = [{ type: 'string' }]),
      '#/properties/line_items: tuple items are not supported.',
    ],
    [
      'a dangling $ref',
      (p) => (p.properties.vendor_id = { $ref: '#/$defs/Vendor' }),
      "$ref '#/$defs/Vendor' does not resolve",
    ],
    ['a root that is an array', (p) => (p.type = 'array'), "#: the root schema must have type 'object'."],
    ['a root anyOf', (p) => (p.anyOf = [{ type: 'object' }]), '#: the root schema must not be anyOf.'],
    ['a name with a dot', (_p, fn) => (fn.name = 'po.create'), 'name "po.create" must match'],
    ['a 65-character name', (_p, fn) => (fn.name = 'x'.repeat(65)), 'must match ^[a-zA-Z0-9_-]{1,64}$'],
    ['strict not set', (_p, fn) => delete fn.strict, 'strict must be true.'],
    ['an empty enum', (p) => (p.properties.currency.enum = []), 'enum must be a non-empty array'],
  ])('rejects %s', (_label, edit, violation) => {
    const violations = checkOpenAIStrictTool(broken(edit));
    expect(
      violations.some((v) => v.includes(violation)),
      violations.join('\n'),
    ).toBe(true);
  });

  it('rejects nesting deeper than the limit, and accepts it at the limit', () => {
    expect(checkOpenAIStrictTool(broken((_p, fn) => (fn.parameters = nested(5))))).toEqual([]);
    const violations = checkOpenAIStrictTool(broken((_p, fn) => (fn.parameters = nested(6))));
    expect(violations).toEqual([
      '#/properties/child/properties/child/properties/child/properties/child/properties/child: object nesting level 6 exceeds the limit of 5.',
    ]);
    expect(
      checkOpenAIStrictTool(
        broken((_p, fn) => (fn.parameters = nested(6))),
        { maxNestingDepth: 10, maxProperties: 5000, maxEnumValues: 1000, maxTotalStringLength: 120_000 },
      ),
    ).toEqual([]);
  });

  it('counts nesting through arrays of objects and nullable branches', () => {
    const deep = nested(4);
    const tool = broken((p) => {
      p.properties.line_items.items.properties.extra = { anyOf: [deep, { type: 'null' }] };
      p.properties.line_items.items.required.push('extra');
    });
    // root (1) → line item (2) → extra's four levels (3..6)
    expect(checkOpenAIStrictTool(tool).join('\n')).toContain('object nesting level 6 exceeds the limit of 5');
  });

  it('rejects more than 100 properties in total', () => {
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, { type: 'string' }]));
    const tool = broken((_p, fn) => {
      fn.parameters = {
        type: 'object',
        properties: many,
        required: Object.keys(many),
        additionalProperties: false,
      };
    });
    expect(checkOpenAIStrictTool(tool)).toEqual([
      '#: 101 object properties in total exceed the limit of 100.',
    ]);
  });

  it('rejects a non-function tool without throwing', () => {
    expect(checkOpenAIStrictTool({ type: 'custom', custom: { name: 'x' } })).toEqual([
      "tool must be { type: 'function', function: { ... } }.",
    ]);
  });

  it.each(latestSampleTools().map((t) => [t.name, t] as const))(
    'accepts the strict export of %s',
    (_name, tool) => {
      const [exported] = toOpenAITools([tool], { strict: true });
      expect(checkOpenAIStrictTool(exported!)).toEqual([]);
    },
  );

  it('accepts the strict export of a varied schema, and rejects the non-strict export of it', () => {
    const varied = defineTool({
      name: 'plan_shipment',
      version: '1.0.0',
      description: 'Plan a shipment of several parcels. Use after the order is paid.',
      input: z.object({
        mode: z.enum(['ground', 'air']),
        parcels: z
          .array(
            z.object({
              weight_kg: z.number().positive().max(70),
              dims: z.object({ l: z.int().min(1), w: z.int().min(1), h: z.int().min(1) }).optional(),
              contents: z.array(z.object({ sku: z.string(), qty: z.int().min(1) })).min(1),
            }),
          )
          .min(1)
          .max(20),
        deliver_by: z.iso.date().optional(),
        contact: z.object({
          email: z.email(),
          phone: z
            .string()
            .regex(/^\+\d{7,15}$/)
            .optional(),
        }),
        insurance: z.union([z.literal('none'), z.object({ value_cents: z.int().min(0) })]).optional(),
        label_note: z.string().max(80).nullable().optional(),
      }),
      output: z.object({ shipment_id: z.string() }),
      scopes: ['shipping:write'],
      owner: 'logistics',
      execute: () => Promise.resolve({ shipment_id: 'S-1' }),
    });
    const [strict] = toOpenAITools([varied], { strict: true });
    expect(checkOpenAIStrictTool(strict!)).toEqual([]);
    const [loose] = toOpenAITools([varied], { strict: false });
    const violations = checkOpenAIStrictTool(loose!);
    expect(violations).toContain('strict must be true.');
    expect(violations).toContain("#: property 'deliver_by' is not listed in required.");
    expect(violations).toContain('#: additionalProperties must be false.');
    expect(checkAnthropicTool(toAnthropicTools([varied])[0]!)).toEqual([]);
  });
});

describe('checkAnthropicTool', () => {
  const valid = (): Tool => ({
    name: 'lookup_order',
    description: 'Get one order.',
    input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  });

  it('accepts a valid tool and every sample export', () => {
    expect(checkAnthropicTool(valid())).toEqual([]);
    for (const tool of toAnthropicTools(latestSampleTools())) expect(checkAnthropicTool(tool)).toEqual([]);
    const { issueRefundV1 } = sampleTools();
    expect(checkAnthropicTool(toAnthropicTools([issueRefundV1])[0]!)).toEqual([]);
  });

  it.each<[string, Tool, string]>([
    ['a name with a space', { ...valid(), name: 'lookup order' }, 'must match ^[a-zA-Z0-9_-]{1,64}$'],
    ['an empty name', { ...valid(), name: '' }, 'must match'],
    ['a 65-character name', { ...valid(), name: 'a'.repeat(65) }, 'must match'],
    [
      'an array input schema',
      { ...valid(), input_schema: { type: 'array' } as unknown as Tool.InputSchema },
      "input_schema.type must be 'object'.",
    ],
    [
      'a missing input schema',
      { ...valid(), input_schema: undefined as unknown as Tool.InputSchema },
      'input_schema must be a JSON Schema object.',
    ],
    ['a missing description', { name: 'x', input_schema: { type: 'object' } }, 'description must be present'],
    ['a blank description', { ...valid(), description: '   ' }, 'description must be present'],
  ])('rejects %s', (_label, tool, violation) => {
    expect(checkAnthropicTool(tool).join('\n')).toContain(violation);
  });
});
