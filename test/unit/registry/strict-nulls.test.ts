import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toOpenAITools } from '../../../libs/registry/export-openai.js';
import type { JsonSchema } from '../../../libs/registry/input-json-schema.js';
import { normalizeStrictNulls } from '../../../libs/registry/strict-nulls.js';
import { latestSampleTools, sampleTools } from './sample-tools.js';

const schema = z.object({
  id: z.string(),
  note: z.string().optional(),
  keep_null: z.string().nullable().optional(),
  count: z.int().default(5),
  nested: z.object({ a: z.string(), b: z.number().optional() }).optional(),
  items: z.array(z.object({ sku: z.string(), qty: z.int().optional() })),
  choice: z
    .union([z.object({ kind: z.literal('x'), x: z.string().optional() }), z.object({ kind: z.literal('y') })])
    .optional(),
});

describe('normalizeStrictNulls', () => {
  it('drops null for optional, non-nullable fields at every depth and keeps declared nulls', () => {
    const args = {
      id: 'a',
      note: null,
      keep_null: null,
      count: null,
      nested: { a: 'q', b: null },
      items: [
        { sku: 's', qty: null },
        { sku: 't', qty: 2 },
      ],
      choice: { kind: 'x', x: null },
    };
    expect(normalizeStrictNulls(schema, args)).toEqual({
      id: 'a',
      keep_null: null,
      nested: { a: 'q' },
      items: [{ sku: 's' }, { sku: 't', qty: 2 }],
      choice: { kind: 'x' },
    });
    expect(schema.parse(normalizeStrictNulls(schema, args))).toMatchObject({ count: 5, keep_null: null });
  });

  it('never touches required fields, so null there is still a schema error', () => {
    const args = { id: null, items: [] };
    expect(normalizeStrictNulls(schema, args)).toBe(args);
    expect(schema.safeParse(normalizeStrictNulls(schema, args)).success).toBe(false);
  });

  it('does not mutate its input and returns the same reference when nothing changes', () => {
    const args = { id: 'a', note: null, items: [{ sku: 's', qty: 1 }] };
    const snapshot = structuredClone(args);
    const out = normalizeStrictNulls(schema, args) as Record<string, unknown>;
    expect(args).toEqual(snapshot);
    expect(out.items).toBe(args.items);
    const untouched = { id: 'a', items: [] };
    expect(normalizeStrictNulls(schema, untouched)).toBe(untouched);
  });

  it('passes non-object arguments through for the validator to refuse', () => {
    expect(normalizeStrictNulls(schema, 'nope')).toBe('nope');
    expect(normalizeStrictNulls(schema, null)).toBe(null);
  });
});

/** What a strict-mode model sends: every key present, null where it has nothing to say. */
function strictShaped(node: JsonSchema, value: unknown): unknown {
  const branches = Array.isArray(node.anyOf) ? (node.anyOf as JsonSchema[]) : [node];
  const objectBranch = branches.find((b) => b.type === 'object');
  if (objectBranch !== undefined && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const props = objectBranch.properties as Record<string, JsonSchema>;
    return Object.fromEntries(
      Object.entries(props).map(([k, child]) => [
        k,
        k in value ? strictShaped(child, (value as Record<string, unknown>)[k]) : null,
      ]),
    );
  }
  const arrayBranch = branches.find(
    (b) => b.type === 'array' || (Array.isArray(b.type) && b.type.includes('array')),
  );
  if (arrayBranch !== undefined && Array.isArray(value)) {
    return value.map((v) => strictShaped(arrayBranch.items as JsonSchema, v));
  }
  return value;
}

describe('defineTool input parsing with strict-mode arguments', () => {
  const minimal: Record<string, Record<string, unknown>> = {
    lookup_order: { order_id: 'O-5512' },
    issue_refund: { order_id: 'O-5512', amount: 20, reason: 'damaged' },
    update_inventory: {
      warehouse: 'AMS-1',
      line_items: [{ sku: 'SKU-7', quantity: 3 }],
      adjustment: { kind: 'recount' },
    },
    search_orders: { filters: { status: ['shipped'] } },
  };

  it.each(latestSampleTools().map((t) => [t.name, t] as const))(
    '%s accepts a strict-mode call and parses it like the call without the nulls',
    (name, tool) => {
      const [exported] = toOpenAITools([tool], { strict: true });
      const args = minimal[name]!;
      const strictArgs = strictShaped(exported!.function.parameters, args);
      expect(Object.values(strictArgs as object)).toContain(null);
      const fromStrict = tool.input.safeParse(strictArgs);
      expect(fromStrict.error).toBeUndefined();
      expect(fromStrict.data).toEqual(tool.input.parse(args));
    },
  );

  it('applies the default of a field the strict-mode model sent as null', () => {
    const { searchOrders } = sampleTools();
    expect(searchOrders.input.parse({ limit: null }).limit).toBe(20);
  });

  it('still refuses null for a required field', () => {
    const { issueRefundV2 } = sampleTools();
    const parsed = issueRefundV2.input.safeParse({
      order_id: 'O-5512',
      amount: null,
      reason: 'late',
      note: null,
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['amount']);
  });
});
