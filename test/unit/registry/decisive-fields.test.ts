import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type ToolDefinitionInput } from '../../../libs/registry/define-tool.js';
import { ToolDefinitionError } from '../../../libs/registry/definition-error.js';

type RefundInput = { order_id: string; amount: number; note?: string; card: { last4: string } };

const refund = {
  name: 'refund_order',
  version: '1.0.0',
  description: 'Refunds part of one order.',
  input: z.object({
    order_id: z.string(),
    amount: z.number(),
    note: z.string().optional(),
    card: z.object({ last4: z.string() }),
  }),
  output: z.object({ ok: z.boolean() }),
  scopes: [] as string[],
  owner: 'payments-team',
  destructive: true,
  auditFields: ['order_id', 'amount', 'note'],
  execute: () => Promise.resolve({ ok: true }),
} satisfies ToolDefinitionInput<RefundInput, { ok: boolean }>;

function problemsOf(decisiveFields: unknown): string[] {
  try {
    defineTool({ ...refund, decisiveFields: decisiveFields as string[] });
  } catch (err) {
    if (err instanceof ToolDefinitionError) return [...err.problems];
    throw err;
  }
  return [];
}

describe('decisiveFields on a tool definition', () => {
  it('keeps decisive fields that are input keys on the audit allow-list, frozen, in order', () => {
    const def = defineTool({ ...refund, decisiveFields: ['amount', 'order_id'] });
    expect(def.decisiveFields).toEqual(['amount', 'order_id']);
    expect(Object.isFrozen(def.decisiveFields)).toBe(true);
    expect(defineTool(refund).decisiveFields).toBeUndefined();
  });

  it('refuses a decisive field that is not a top-level key of the input schema', () => {
    expect(problemsOf(['amount', 'card.last4'])).toEqual([
      "decisiveFields names 'card.last4', which is not a top-level key of the input schema.",
    ]);
  });

  it('refuses a decisive field a person may not see (not on auditFields)', () => {
    expect(problemsOf(['card'])).toEqual([
      "decisiveFields names 'card', which is not on auditFields: a person must be allowed to see a decisive field.",
    ]);
  });

  it('refuses duplicates and anything but an array of names', () => {
    expect(problemsOf(['amount', 'amount'])).toEqual(["decisiveFields names 'amount' twice."]);
    expect(problemsOf('amount')).toEqual(['decisiveFields must be an array of input keys.']);
    expect(problemsOf([1])).toEqual(['decisiveFields must be an array of input keys.']);
  });
});
