import { afterEach, describe, expect, it } from 'vitest';
import { businessRulesStage } from '../../../libs/guards/business-rules.js';
import { resolveStage } from '../../../libs/guards/resolve.js';
import type { CallState } from '../../../libs/pipeline/call-state.js';
import type { PolicyRule } from '../../../libs/policy/index.js';
import { call, context, countingRefundTool, harness } from '../pipeline/fixtures.js';
import type { Harness } from '../pipeline/fixtures.js';

let h: Harness | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

function bare(name: string, args: Record<string, unknown>, version?: string): CallState {
  return {
    call: call(args, { name, ...(version === undefined ? {} : { version }) }),
    ctx: context(),
    signal: new AbortController().signal,
    toolInvocations: 0,
    attempts: [],
  };
}

describe('resolve stage', () => {
  it('sets state.tool for a known name (current version) and for a pinned version', async () => {
    const v1 = countingRefundTool().tool;
    const v2 = countingRefundTool({ version: '2.0.0' }).tool;
    h = harness([v1, v2]);
    const current = bare('issue_refund', {});
    const pinned = bare('issue_refund', {}, '1.0.0');
    expect(await resolveStage(current, h.deps)).toEqual({ kind: 'continue' });
    expect(await resolveStage(pinned, h.deps)).toEqual({ kind: 'continue' });
    expect(current.tool?.version).toBe('2.0.0');
    expect(pinned.tool?.version).toBe('1.0.0');
  });

  it('refuses an unknown name with UNKNOWN_TOOL and a did-you-mean, retryable', async () => {
    h = harness([countingRefundTool().tool]);
    const state = bare('issue_refnd', {});
    const r = await resolveStage(state, h.deps);
    expect(r.kind === 'refuse' && [r.error.code, r.error.retryable]).toEqual(['UNKNOWN_TOOL', true]);
    expect(r.kind === 'refuse' && r.error.message).toContain('issue_refund');
    expect(state.tool).toBeUndefined();
  });

  it('resolves for the context tenant: a tool restricted to another tenant is unknown here', async () => {
    h = harness([]);
    h.registry.register(countingRefundTool().tool, { tenants: ['t2'] });
    const r = await resolveStage(bare('issue_refund', {}), h.deps);
    expect(r.kind === 'refuse' && r.error.code).toBe('UNKNOWN_TOOL');
  });
});

describe('business-rules stage', () => {
  const rules = (alternative?: string): PolicyRule[] => [
    {
      id: 'cap',
      tool: 'issue_refund',
      field: 'amount',
      check: { max: 100 },
      reason: 'Refunds are capped at {limit}; {value} is too much.',
      ...(alternative === undefined ? {} : { alternative }),
    },
  ];

  function ready(args: Record<string, unknown>, ruleSet: PolicyRule[]): { state: CallState; h: Harness } {
    const tool = countingRefundTool().tool;
    h = harness([tool], { rules: ruleSet });
    return { state: { ...bare('issue_refund', args), tool: tool as unknown as CallState['tool'], args }, h };
  }

  it('continues within policy', async () => {
    const { state, h: hh } = ready({ order_id: 'O-1', amount: 100 }, rules());
    expect(await businessRulesStage(state, hh.deps)).toEqual({ kind: 'continue' });
  });

  it('refuses POLICY_VIOLATION, not retryable, when no alternative exists', async () => {
    const { state, h: hh } = ready({ order_id: 'O-1', amount: 150 }, rules());
    const r = await businessRulesStage(state, hh.deps);
    expect(r.kind).toBe('refuse');
    if (r.kind !== 'refuse') return;
    expect(r.error.code).toBe('POLICY_VIOLATION');
    expect(r.error.message).toBe('Refunds are capped at 100; 150 is too much.');
    expect(r.error.retryable).toBe(false);
    expect(r.error.suggestedFix).toBeUndefined();
  });

  it('is retryable with the alternative as suggested fix when one exists', async () => {
    const { state, h: hh } = ready(
      { order_id: 'O-1', amount: 150 },
      rules('Refund 100 now and ask a manager for the rest.'),
    );
    const r = await businessRulesStage(state, hh.deps);
    expect(r.kind === 'refuse' && [r.error.retryable, r.error.suggestedFix]).toEqual([
      true,
      'Refund 100 now and ask a manager for the rest.',
    ]);
  });

  it('rejects (never throws synchronously) when run before validation', async () => {
    h = harness([countingRefundTool().tool]);
    const state = bare('issue_refund', {});
    await expect(businessRulesStage(state, h.deps)).rejects.toMatchObject({ code: 'INTERNAL' });
  });
});
