import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatPath, formatZodIssues, zodIssueLines } from '../../../libs/registry/format-zod-issues.js';

function lines(schema: z.ZodType, input: unknown): string[] {
  const parsed = schema.safeParse(input);
  if (parsed.success) throw new Error('expected the input to be invalid');
  return zodIssueLines(parsed.error.issues, input);
}

describe('zodIssueLines', () => {
  it('renders numeric bounds the way a person would say them', () => {
    const s = z.object({
      line_items: z.array(z.object({ quantity: z.number().positive() })),
      a: z.number().min(1),
      b: z.number().max(10),
      c: z.number().lt(10),
      d: z.number().int(),
    });
    expect(lines(s, { line_items: [{ quantity: 0 }], a: 0, b: 11, c: 10, d: 1.5 })).toEqual([
      'line_items.0.quantity: must be greater than 0',
      'a: must be greater than or equal to 1',
      'b: must be less than or equal to 10',
      'c: must be less than 10',
      'd: must be an integer',
    ]);
  });

  it('names wrong types and missing fields without echoing the value', () => {
    const s = z.object({ amount: z.number(), order_id: z.string(), tags: z.array(z.string()) });
    expect(lines(s, { amount: 'sk-live-secret', tags: null })).toEqual([
      'amount: expected number, received string',
      'order_id: is required (expected string)',
      'tags: expected array, received null',
    ]);
  });

  it('lists each unrecognized key as its own line, at its path', () => {
    const s = z.object({ shipping: z.object({ city: z.string() }).strict() }).strict();
    expect(lines(s, { shipping: { city: 'Oslo', gift_wrap: true }, approved_by: 'manager' })).toEqual([
      'shipping.gift_wrap: unknown field; remove it',
      'approved_by: unknown field; remove it',
    ]);
  });

  it('covers strings, enums, literals, formats, multiples and unions', () => {
    const s = z.object({
      name: z.string().min(1),
      code: z.string().length(3),
      note: z.string().max(5),
      status: z.enum(['pending', 'approved']),
      kind: z.literal('refund'),
      email: z.email(),
      sku: z.string().regex(/^SKU-\d+$/),
      prefix: z.string().startsWith('O-'),
      qty: z.number().multipleOf(5),
      id: z.union([z.string(), z.number()]),
      at: z.iso.datetime(),
    });
    const input = {
      name: '',
      code: 'ab',
      note: 'too long',
      status: 'in_review',
      kind: 'charge',
      email: 'nope',
      sku: 'x',
      prefix: 'X-1',
      qty: 7,
      id: true,
      at: 'yesterday',
    };
    expect(lines(s, input)).toEqual([
      'name: must not be empty',
      'code: must be exactly 3 characters long',
      'note: must be at most 5 characters long',
      'status: must be one of "pending", "approved"',
      'kind: must be "refund"',
      'email: must be an email address',
      'sku: must match the pattern /^SKU-\\d+$/',
      'prefix: must start with "O-"',
      'qty: must be a multiple of 5',
      'id: expected one of string, number, received boolean',
      'at: must be an ISO 8601 date-time (e.g. 2024-05-01T12:00:00Z)',
    ]);
  });

  it('keeps messages a schema author wrote, since they carry the domain constraint', () => {
    const s = z.object({
      amount: z.number().max(10_000, { error: 'amount is in USD and at most 10000 without approval' }),
      slot: z.string().refine((v) => v.startsWith('S-'), 'must be a slot id like S-12'),
    });
    expect(lines(s, { amount: 20_000, slot: 'x' })).toEqual([
      'amount: amount is in USD and at most 10000 without approval',
      'slot: must be a slot id like S-12',
    ]);
  });

  it('names discriminated-union mismatches at the discriminator', () => {
    const s = z.object({
      action: z.discriminatedUnion('type', [
        z.object({ type: z.literal('refund') }),
        z.object({ type: z.literal('credit') }),
      ]),
    });
    expect(lines(s, { action: { type: 'charge' } })).toEqual([
      'action.type: must be one of "refund", "credit"',
    ]);
  });

  it('labels root issues "arguments" and quotes unusual keys', () => {
    expect(lines(z.object({}), 'x')).toEqual(['arguments: expected object, received string']);
    expect(formatPath(['a b', 0, 'ok'])).toBe('"a b".0.ok');
    expect(formatPath(['x'.repeat(60)])).toBe(JSON.stringify(`${'x'.repeat(40)}…`));
  });
});

describe('formatZodIssues', () => {
  it('joins lines and caps them, counting the rest', () => {
    const s = z.object({ a: z.string(), b: z.string(), c: z.string(), d: z.string() });
    const parsed = s.safeParse({});
    expect(parsed.success).toBe(false);
    if (parsed.success) return;
    expect(formatZodIssues(parsed.error.issues, {}, 2)).toBe(
      'a: is required (expected string); b: is required (expected string) (and 2 more)',
    );
    expect(formatZodIssues(parsed.error.issues, {}, 10).split('; ')).toHaveLength(4);
  });
});
