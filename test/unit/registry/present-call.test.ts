import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../libs/registry/define-tool.js';
import {
  DEFAULT_PRESENTATION_MAX_CHARS,
  presentCall,
  presentParsedCall,
  type Presentation,
  type PresentedCall,
} from '../../../libs/registry/present-call.js';

/** A money-moving tool: `amount` and `account` decide the effect; `pin` is never shown. */
const transfer = defineTool({
  name: 'transfer_funds',
  version: '2.1.0',
  description: 'Moves money between two accounts of the tenant.',
  input: z.object({
    reference: z.string(),
    account: z.string(),
    amount: z.number(),
    memo: z.string().default(''),
    pin: z.string().optional(),
    tags: z.array(z.string()).optional(),
  }),
  output: z.object({ ok: z.boolean() }),
  scopes: [],
  owner: 'payments-team',
  destructive: true,
  auditFields: ['reference', 'account', 'amount', 'memo', 'tags'],
  decisiveFields: ['amount', 'account'],
  execute: () => Promise.resolve({ ok: true }),
});

function shown(p: Presentation): PresentedCall {
  if (!p.ok) throw new Error(`expected a presentation, got: ${p.reason}`);
  return p.call;
}

describe('presentCall', () => {
  it('shows the decisive fields first, in the tool’s order, then the other visible fields in input order', () => {
    const call = shown(
      presentCall(transfer, { memo: 'rent', reference: 'R-1', account: 'ACC-9', amount: 250 }),
    );
    expect(call.tool).toBe('transfer_funds');
    expect(call.version).toBe('2.1.0');
    expect(call.fields).toEqual([
      { name: 'amount', value: '250', decisive: true },
      { name: 'account', value: 'ACC-9', decisive: true },
      { name: 'reference', value: 'R-1', decisive: false },
      { name: 'memo', value: 'rent', decisive: false },
    ]);
    expect(call.text).toBe(
      [
        'Call transfer_funds (version 2.1.0) with:',
        'amount: 250',
        'account: ACC-9',
        'reference: R-1',
        'memo: rent',
      ].join('\n'),
    );
  });

  it('validates and normalizes first: unknown fields are gone, defaults applied, JSON for non-strings', () => {
    const call = shown(
      presentCall(transfer, {
        note: 'x'.repeat(2_100),
        reference: 'R-2',
        account: 'ACC-1',
        amount: 999_999,
        tags: ['a', 'b'],
      }),
    );
    expect(call.text).not.toContain('note');
    expect(call.fields.map((f) => [f.name, f.value])).toEqual([
      ['amount', '999999'],
      ['account', 'ACC-1'],
      ['reference', 'R-2'],
      ['memo', '""'],
      ['tags', '["a","b"]'],
    ]);
  });

  it('refuses arguments the schema refuses, with the problems and without echoing values', () => {
    const p = presentCall(transfer, { reference: 'R-3', account: 'ACC-1', amount: 'a lot' });
    expect(p.ok).toBe(false);
    if (p.ok) return;
    expect(p.reason).toContain('amount: expected number, received string');
    expect(p.reason).not.toContain('a lot');
  });

  it('names fields that are not on the audit allow-list as withheld and never shows their values', () => {
    const call = shown(
      presentCall(transfer, { reference: 'R-4', account: 'ACC-1', amount: 5, pin: 'secret-4711' }),
    );
    expect(call.text).not.toContain('secret-4711');
    expect(call.fields.map((f) => f.name)).not.toContain('pin');
    expect(call.text.split('\n').at(-1)).toBe('Withheld from view: pin');
  });

  it('shortens other values with a marker saying how much is cut, keeps decisive values whole, stays within the limit', () => {
    const account = `ACC-${'7'.repeat(600)}`;
    const memo = 'm'.repeat(3_000);
    const reference = `R-${'r'.repeat(900)}`;
    const call = shown(presentCall(transfer, { reference, account, amount: 12, memo }));
    expect(call.text.length).toBeLessThanOrEqual(DEFAULT_PRESENTATION_MAX_CHARS);
    const byName = new Map(call.fields.map((f) => [f.name, f.value]));
    expect(byName.get('account')).toBe(account);
    const cutMemo = byName.get('memo')!;
    const memoMatch = /^(m*)… \(([\d,]+) more characters not shown\)$/.exec(cutMemo);
    expect(memoMatch, cutMemo).not.toBeNull();
    expect(memoMatch![1]!.length + Number(memoMatch![2]!.replaceAll(',', ''))).toBe(3_000);
    const cutRef = byName.get('reference')!;
    expect(cutRef).toMatch(/^R-r*… \([\d,]+ more characters not shown\)$/);
    // Both long values share the room left, neither is cut to nothing.
    expect(memoMatch![1]!.length).toBeGreaterThan(100);
  });

  it('keeps a short value whole while a long one is cut', () => {
    const call = shown(
      presentCall(transfer, { reference: 'R-5', account: 'A', amount: 1, memo: 'z'.repeat(5_000) }),
    );
    expect(call.fields.find((f) => f.name === 'reference')?.value).toBe('R-5');
    expect(call.fields.find((f) => f.name === 'memo')?.value).toContain('more characters not shown');
  });

  it('does not put a call to a person when a decisive field cannot be shown in full within the limit', () => {
    const p = presentCall(transfer, { reference: 'R-6', account: 'A'.repeat(2_500), amount: 1 });
    expect(p).toEqual({ ok: false, reason: expect.stringContaining('account (2,500 characters)') });
    expect(
      shown(
        presentCall(transfer, { reference: 'R-6', account: 'A'.repeat(500), amount: 1 }, { maxChars: 600 }),
      ),
    ).toBeDefined();
    expect(
      presentCall(transfer, { reference: 'R-6', account: 'A'.repeat(500), amount: 1 }, { maxChars: 520 }).ok,
    ).toBe(false);
  });

  it('escapes hidden and bidirectional characters in values and names', () => {
    const call = shown(
      presentCall(transfer, { reference: 'R-7\nmemo: fine', account: 'ACC\u202E1-CCA', amount: 3 }),
    );
    expect(call.text).toContain('account: ACC\\u{202E}1-CCA');
    expect(call.text).toContain('reference: R-7\\u{000A}memo: fine');
    expect(call.text).not.toMatch(/[\u202E]/);
    // One line per field: the newline inside a value does not fake a line.
    expect(call.text.split('\n')).toHaveLength(5);
  });

  it('never splits an escape or a surrogate pair when shortening', () => {
    const memo = `${'\u202E'.repeat(400)}${'😀'.repeat(400)}`;
    const call = shown(
      presentCall(transfer, { reference: 'R', account: 'A', amount: 1, memo }, { maxChars: 300 }),
    );
    const value = call.fields.find((f) => f.name === 'memo')!.value;
    const kept = value.slice(0, value.indexOf('…'));
    expect(kept).toMatch(/^(\\u\{202E\})*$/);
    const emoji = shown(
      presentCall(
        transfer,
        { reference: 'R', account: 'A', amount: 1, memo: '😀'.repeat(400) },
        { maxChars: 201 },
      ),
    );
    const emojiValue = emoji.fields.find((f) => f.name === 'memo')!.value;
    expect(emojiValue.slice(0, emojiValue.indexOf('…'))).toMatch(/^(😀)*$/u);
  });

  it('shows a decisive field the call leaves out as not given', () => {
    const optional = defineTool({
      name: 'close_account',
      version: '1.0.0',
      description: 'Closes an account.',
      input: z.object({ account: z.string(), transfer_to: z.string().optional() }),
      output: z.object({}),
      scopes: [],
      owner: 'payments-team',
      auditFields: ['account', 'transfer_to'],
      decisiveFields: ['account', 'transfer_to'],
      execute: () => Promise.resolve({}),
    });
    expect(shown(presentCall(optional, { account: 'A-1' })).fields).toEqual([
      { name: 'account', value: 'A-1', decisive: true },
      { name: 'transfer_to', value: '(not given)', decisive: true },
    ]);
  });

  it('renders already-normalized arguments without parsing them again', () => {
    const call = shown(presentParsedCall(transfer, { reference: 'R', account: 'A', amount: 2, memo: '' }));
    expect(call.fields.map((f) => f.name)).toEqual(['amount', 'account', 'reference', 'memo']);
    expect(() => presentParsedCall(transfer, {}, { maxChars: 0 })).toThrow(RangeError);
  });

  it('refuses a schema that only validates asynchronously rather than presenting it unchecked', () => {
    const asyncTool = defineTool({
      name: 'async_check',
      version: '1.0.0',
      description: 'Has an async refinement.',
      input: z.object({ id: z.string().refine(async () => Promise.resolve(true)) }),
      output: z.object({}),
      scopes: [],
      owner: 'team',
      auditFields: ['id'],
      execute: () => Promise.resolve({}),
    });
    const p = presentCall(asyncTool, { id: 'x' });
    expect(p).toEqual({ ok: false, reason: expect.stringContaining('validates asynchronously') });
  });
});
