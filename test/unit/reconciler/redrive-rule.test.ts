import { describe, expect, it } from 'vitest';
import type { CaseReason, CaseState } from '../../../libs/ports/case-store.js';
import type { CaseRequest } from '../../../libs/reconcile/case-request.js';
import type { RetrySafety } from '../../../libs/registry/tool-definition.js';
import { redrivePlan } from '../../../libs/reconcile/redrive-rule.js';

const REQUEST = { arguments: { orderId: 'O-1' } } as unknown as CaseRequest;
const NO_ARGS = { arguments: undefined } as unknown as CaseRequest;
const tool = (kind: RetrySafety<unknown>['kind']) => ({
  name: 'issue_refund',
  version: '1.0.0',
  retrySafety: (kind === 'status-check'
    ? { kind, check: () => Promise.resolve({ state: 'unknown' }) }
    : { kind }) as RetrySafety<unknown>,
});
const c = (reason: CaseReason, state: CaseState = 'needs_manual') => ({ reason, state });

describe('the redrive rule', () => {
  it('UNRESOLVED: recheck with a status check, re-submit read-only and forwards-key, refuse none', () => {
    expect(redrivePlan(c('UNRESOLVED'), REQUEST, tool('status-check'))).toEqual({ kind: 'recheck' });
    expect(redrivePlan(c('UNRESOLVED'), REQUEST, tool('forwards-key'))).toEqual({
      kind: 'resubmit',
      retireUnresolved: true,
    });
    expect(redrivePlan(c('UNRESOLVED'), REQUEST, tool('read-only'))).toMatchObject({ kind: 'resubmit' });
    expect(redrivePlan(c('UNRESOLVED'), REQUEST, tool('none'))).toMatchObject({
      kind: 'refuse',
      reason: 'not-redrivable',
      detail: expect.stringContaining('retry safety "none"'),
    });
    expect(redrivePlan(c('UNRESOLVED'), REQUEST, undefined)).toMatchObject({
      kind: 'refuse',
      detail: expect.stringContaining('the tool cannot be resolved'),
    });
  });

  it('POISON / EXHAUSTED: re-submit whatever the tool when the request is known, else refuse', () => {
    for (const reason of ['POISON', 'EXHAUSTED'] as const) {
      expect(redrivePlan(c(reason), REQUEST, tool('none'))).toEqual({
        kind: 'resubmit',
        retireUnresolved: false,
      });
      expect(redrivePlan(c(reason), undefined, undefined)).toMatchObject({
        kind: 'refuse',
        reason: 'not-redrivable',
      });
      expect(redrivePlan(c(reason), NO_ARGS, tool('none'))).toMatchObject({ kind: 'refuse' });
    }
  });

  it('only needs_manual and resolved_failed cases move', () => {
    expect(redrivePlan(c('EXHAUSTED', 'resolved_failed'), REQUEST, undefined)).toMatchObject({
      kind: 'resubmit',
    });
    for (const state of ['open', 'resolved_succeeded'] as const) {
      expect(redrivePlan(c('EXHAUSTED', state), REQUEST, tool('forwards-key'))).toEqual({
        kind: 'refuse',
        reason: 'not-allowed',
        detail: `a ${state} case cannot be redriven`,
      });
    }
  });
});
