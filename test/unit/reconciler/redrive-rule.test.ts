import { describe, expect, it } from 'vitest';
import type { CaseReason, CaseState } from '../../../libs/ports/case-store.js';
import type { CaseRequest } from '../../../libs/reconcile/case-request.js';
import type { RetrySafety } from '../../../libs/registry/tool-definition.js';
import { automaticRedrivePlan, redrivePlan } from '../../../libs/reconcile/redrive-rule.js';

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
  });

  it('UNRESOLVED, tool not in the loaded catalog: names the tool and how to load its catalog', () => {
    const request = { ...REQUEST, tool: 'lookup_ticket', toolVersion: '1.0.0' } as CaseRequest;
    expect(redrivePlan(c('UNRESOLVED'), request, undefined)).toEqual({
      kind: 'refuse',
      reason: 'not-redrivable',
      detail:
        "lookup_ticket@1.0.0 is not in the tool catalog loaded here, which decides by the tool's retry " +
        'safety whether running the call again is safe: load the catalog that defines it ' +
        '(--catalog <module>, or TOOLGATE_CATALOG_MODULE)',
    });
    expect(redrivePlan(c('UNRESOLVED'), { ...request, toolVersion: null }, undefined)).toMatchObject({
      detail: expect.stringMatching(/^lookup_ticket is not in the tool catalog/),
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

describe('the automatic redrive rule', () => {
  const open = (reason: CaseReason = 'UNRESOLVED', autoRedrives = 0, state: CaseState = 'open') => ({
    reason,
    state,
    history: [
      { from: 'open' as const, to: 'open' as const, by: 'status-check' as const, note: 'triaged', atMs: 1 },
      ...Array.from({ length: autoRedrives }, (_, i) => ({
        from: 'open' as const,
        to: 'open' as const,
        by: 'status-check' as const,
        note: `automatic redrive ${i + 1}`,
        atMs: 2 + i,
        autoRedrive: true as const,
      })),
    ],
  });
  const keyed = { ran: tool('forwards-key'), runs: tool('forwards-key') };

  it('re-submits an open UNRESOLVED call whose tool forwards the key, numbering each, up to the limit', () => {
    expect(automaticRedrivePlan(open(), REQUEST, keyed, 2)).toEqual({
      kind: 'resubmit',
      retireUnresolved: true,
      number: 1,
    });
    expect(automaticRedrivePlan(open('UNRESOLVED', 1), REQUEST, keyed, 2)).toMatchObject({ number: 2 });
    expect(automaticRedrivePlan(open('UNRESOLVED', 2), REQUEST, keyed, 2)).toEqual({
      kind: 'limit-reached',
      detail: 'the reconciler has redriven it by itself 2 times, its limit',
    });
    expect(automaticRedrivePlan(open(), REQUEST, keyed, 0)).toEqual({
      kind: 'limit-reached',
      detail: 'automatic redrives are off (limit 0)',
    });
  });

  it('leaves every other case to a person: other tools, reasons and states, unknown versions, no request', () => {
    for (const kind of ['none', 'read-only', 'status-check'] as const) {
      expect(automaticRedrivePlan(open(), REQUEST, { ran: tool(kind), runs: tool(kind) }, 2)).toMatchObject({
        kind: 'not-eligible',
        detail: expect.stringContaining(`retry safety "${kind}"`),
      });
      // The version a re-submission would run must forward the key too.
      expect(
        automaticRedrivePlan(open(), REQUEST, { ran: tool('forwards-key'), runs: tool(kind) }, 2),
      ).toMatchObject({ kind: 'not-eligible' });
    }
    expect(
      automaticRedrivePlan(open(), REQUEST, { ran: undefined, runs: tool('forwards-key') }, 2),
    ).toMatchObject({
      kind: 'not-eligible',
      detail: expect.stringContaining('no longer registered'),
    });
    expect(
      automaticRedrivePlan(open(), REQUEST, { ran: tool('forwards-key'), runs: undefined }, 2),
    ).toMatchObject({
      kind: 'not-eligible',
    });
    for (const reason of ['POISON', 'EXHAUSTED'] as const) {
      expect(automaticRedrivePlan(open(reason), REQUEST, keyed, 2)).toMatchObject({ kind: 'not-eligible' });
    }
    for (const state of ['needs_manual', 'resolved_failed', 'resolved_succeeded'] as const) {
      expect(automaticRedrivePlan(open('UNRESOLVED', 0, state), REQUEST, keyed, 2)).toMatchObject({
        kind: 'not-eligible',
      });
    }
    expect(automaticRedrivePlan(open(), NO_ARGS, keyed, 2)).toMatchObject({ kind: 'not-eligible' });
    expect(automaticRedrivePlan(open(), undefined, keyed, 2)).toMatchObject({ kind: 'not-eligible' });
  });
});
