import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { validateInputStage } from '../../../libs/guards/validate-input.js';
import type { CallState } from '../../../libs/pipeline/call-state.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import { call, context, countingRefundTool, harness } from '../pipeline/fixtures.js';
import type { Harness } from '../pipeline/fixtures.js';

let h: Harness | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

function stateFor(tool: object, args: Record<string, unknown>): CallState {
  h?.close();
  h = harness([tool]);
  return {
    call: call(args),
    ctx: context(),
    signal: new AbortController().signal,
    tool: tool as CallState['tool'],
    toolInvocations: 0,
    attempts: [],
  };
}

const orderTool = defineTool({
  name: 'create_purchase_order',
  version: '1.0.0',
  description: 'Create a purchase order from line items.',
  input: z.object({
    supplier: z.string(),
    line_items: z.array(z.object({ sku: z.string(), quantity: z.number().int().positive() })).min(1),
  }),
  output: z.object({ po_id: z.string() }),
  scopes: ['po:write'],
  owner: 'procurement',
  execute: () => Promise.resolve({ po_id: 'PO-1' }),
});

describe('validate-input stage', () => {
  it('sets state.args to the parsed value and continues', async () => {
    const state = stateFor(countingRefundTool().tool, { order_id: 'O-1', amount: 5 });
    expect(await validateInputStage(state, h!.deps)).toEqual({ kind: 'continue' });
    expect(state.args).toEqual({ order_id: 'O-1', amount: 5 });
  });

  it('treats null for an optional field as absent (strict-mode models send null)', async () => {
    const state = stateFor(countingRefundTool().tool, { order_id: 'O-1', amount: 5, reason: null });
    expect((await validateInputStage(state, h!.deps)).kind).toBe('continue');
    expect(state.args).toEqual({ order_id: 'O-1', amount: 5 });
  });

  it('refuses SCHEMA_INVALID with a path: message list the model can act on', async () => {
    const state = stateFor(orderTool, { supplier: 7, line_items: [{ sku: 'A', quantity: 0 }] });
    const r = await validateInputStage(state, h!.deps);
    expect(r.kind).toBe('refuse');
    if (r.kind !== 'refuse') return;
    expect(r.error.code).toBe('SCHEMA_INVALID');
    expect(r.error.retryable).toBe(true);
    expect(r.error.message).toBe(
      'Invalid arguments for create_purchase_order: supplier: expected string, received number; line_items.0.quantity: must be greater than 0',
    );
    expect(r.error.suggestedFix).toContain('create_purchase_order');
    expect(state.args).toBeUndefined();
  });

  it('caps the number of listed issues', async () => {
    const items = Array.from({ length: 9 }, () => ({ sku: 'A', quantity: -1 }));
    const r = await validateInputStage(stateFor(orderTool, { supplier: 's', line_items: items }), h!.deps);
    expect(r.kind === 'refuse' && r.error.message).toMatch(
      /line_items\.4\.quantity: must be greater than 0 \(and 4 more\)$/,
    );
    expect(r.kind === 'refuse' && r.error.message).not.toContain('line_items.5');
  });

  it('supports async refinements', async () => {
    const tool = defineTool({
      name: 'reserve_slot',
      version: '1.0.0',
      description: 'Reserve a slot.',
      input: z.object({
        slot: z
          .string()
          .refine(async (s) => Promise.resolve(s.startsWith('S-')), 'must be a slot id like S-12'),
      }),
      output: z.object({ ok: z.boolean() }),
      scopes: [],
      owner: 'ops',
      execute: () => Promise.resolve({ ok: true }),
    });
    const r = await validateInputStage(stateFor(tool, { slot: 'x' }), h!.deps);
    expect(r.kind === 'refuse' && r.error.message).toBe(
      'Invalid arguments for reserve_slot: slot: must be a slot id like S-12',
    );
  });
});
