import { describe, expect, it } from 'vitest';
import { toAnthropicTools } from '../../../libs/registry/export-anthropic.js';
import { latestSampleTools, ORDER_ID_JSON_SCHEMA, sampleTools } from './sample-tools.js';

describe('toAnthropicTools', () => {
  it('builds { name, description, input_schema } with an object root', () => {
    const { lookupOrder } = sampleTools();
    expect(toAnthropicTools([lookupOrder])).toEqual([
      {
        name: 'lookup_order',
        description: lookupOrder.description,
        input_schema: {
          type: 'object',
          properties: {
            order_id: ORDER_ID_JSON_SCHEMA,
            include_items: { type: 'boolean', description: 'Also return the line items.' },
          },
          required: ['order_id'],
        },
      },
    ]);
  });

  it('keeps optional fields optional and every constraint, minus zod token noise', () => {
    const [, , inventory, search] = toAnthropicTools(latestSampleTools());
    const inv = inventory!.input_schema as unknown as {
      required: string[];
      properties: Record<string, Record<string, unknown>>;
    };
    expect(inv.required).toEqual(['warehouse', 'line_items']);
    expect(inv.properties.line_items).toMatchObject({ minItems: 1, maxItems: 50 });
    expect(inv.properties.effective_at).toEqual({
      type: 'string',
      format: 'date-time',
      description: 'When the change took effect (UTC).',
    });
    const limit = (search!.input_schema as unknown as { properties: Record<string, unknown> }).properties
      .limit;
    expect(limit).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    expect(JSON.stringify(search)).not.toContain('9007199254740991');
  });

  it('refuses a list that names a tool twice', () => {
    const { issueRefundV1, issueRefundV2 } = sampleTools();
    expect(() => toAnthropicTools([issueRefundV1, issueRefundV2])).toThrow(/names it twice/);
  });
});
