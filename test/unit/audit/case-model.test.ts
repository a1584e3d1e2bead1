import { describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { CaseChange, CaseState, ReconciliationCase } from '../../../libs/ports/case-store.js';
import {
  applyTransition,
  CASE_TRANSITIONS,
  dueBound,
  matchesExpected,
  newCase,
  refusal,
} from '../../../libs/reconcile/case-model.js';
import { deadLetter } from './fixtures.js';

const STATES: CaseState[] = ['open', 'needs_manual', 'resolved_succeeded', 'resolved_failed'];
const OP = 'operator:alice' as const;

function inState(state: CaseState): ReconciliationCase {
  const c = newCase(deadLetter(), 'case-1', 1_000);
  return {
    ...c,
    state,
    nextCheckAtMs: state === 'open' ? 1_000 : null,
    resolution: state.startsWith('resolved') ? { by: OP, note: 'x', atMs: 1_000 } : null,
  };
}

describe('newCase', () => {
  it('opens the case due now, with the dead letter parsed into it', () => {
    const dl = deadLetter({ lastKnownStateJson: 'not json', requestJson: null });
    const c = newCase(dl, 'case-9', 5_000.7);
    expect(c).toMatchObject({
      caseId: 'case-9',
      deadLetterId: dl.deadLetterId,
      callId: dl.callId,
      state: 'open',
      reason: 'UNRESOLVED',
      nextCheckAtMs: 5_000,
      createdAtMs: 5_000,
      version: 1,
      statusChecks: [],
      history: [],
      resolution: null,
      lastKnownState: { unparsed: 'not json' },
      attemptHistory: [{ attempt: 1, startedAtMs: 1_000, durationMs: 30_000, result: 'TIMEOUT' }],
    });
    expect(c.context).toMatchObject({
      errorCode: 'TIMEOUT',
      request: null,
      originalTopic: 'toolgate.calls',
      originalOffset: '42',
      deadLetteredAtMs: 31_000,
    });
  });

  it('keeps a non-array attempt history as a one-element list, and cleans unstorable text', () => {
    const c = newCase(deadLetter({ attemptsJson: '{"odd":true}', tool: 'x\u0000' }), 'c', 0);
    expect(c.attemptHistory).toEqual([{ odd: true }]);
    expect(c.tool).toBe('x\uFFFD');
  });

  it('refuses a dead letter it could never match again', () => {
    expect(() => newCase(deadLetter({ callId: null }), 'c', 0)).toThrow(/callId/);
    expect(newCase(deadLetter({ callId: null, reason: 'POISON' }), 'c', 0).callId).toBeNull();
    expect(() => newCase(deadLetter({ deadLetterId: '' }), 'c', 0)).toThrow(ToolgateError);
    expect(() => newCase(deadLetter({ reason: 'LOST' as never }), 'c', 0)).toThrow(/reason/);
    expect(() => newCase(deadLetter({ createdAtMs: NaN }), 'c', 0)).toThrow(ToolgateError);
  });
});

describe('the transition table', () => {
  it('is exactly the documented one', () => {
    const allowed = STATES.flatMap((from) => CASE_TRANSITIONS[from].map((to) => `${from}->${to}`)).sort();
    expect(allowed).toEqual(
      [
        'open->open',
        'open->resolved_succeeded',
        'open->resolved_failed',
        'open->needs_manual',
        'needs_manual->resolved_succeeded',
        'needs_manual->resolved_failed',
        'needs_manual->open',
        'resolved_failed->open',
      ].sort(),
    );
  });

  it('a person with a note can make every allowed move and no other', () => {
    for (const from of STATES) {
      for (const to of STATES) {
        const change: CaseChange = {
          to,
          by: OP,
          note: 'checked by hand',
          ...(to === 'open' ? { nextCheckAtMs: 2_000 } : {}),
        };
        const result = applyTransition(inState(from), change, 1_500);
        expect(result.ok, `${from} -> ${to}`).toBe(CASE_TRANSITIONS[from].includes(to));
      }
    }
  });

  it('resolved_succeeded is final', () => {
    for (const to of STATES) {
      expect(refusal(inState('resolved_succeeded'), { to, by: OP, note: 'n', nextCheckAtMs: 1 })).toMatch(
        /not a move/,
      );
    }
  });
});

describe('who may do what', () => {
  const applied = { atMs: 1_200, answer: { state: 'applied' as const, result: { refundId: 'R-1' } } };
  const notApplied = { atMs: 1_200, answer: { state: 'not-applied' as const } };
  const unknown = { atMs: 1_200, answer: { state: 'unknown' as const } };

  it('the checker resolves an open case only with a matching status check', () => {
    const open = inState('open');
    expect(refusal(open, { to: 'resolved_succeeded', by: 'status-check', note: '' })).toMatch(/applied/);
    expect(
      refusal(open, { to: 'resolved_succeeded', by: 'status-check', note: '', statusCheck: notApplied }),
    ).toMatch(/applied/);
    expect(
      refusal(open, { to: 'resolved_failed', by: 'status-check', note: '', statusCheck: applied }),
    ).toMatch(/not-applied/);
    expect(
      refusal(open, { to: 'resolved_succeeded', by: 'status-check', note: '', statusCheck: applied }),
    ).toBeUndefined();
    expect(
      refusal(open, { to: 'resolved_failed', by: 'status-check', note: '', statusCheck: notApplied }),
    ).toBeUndefined();
  });

  it('staying open needs the next check time and an inconclusive answer', () => {
    const open = inState('open');
    expect(refusal(open, { to: 'open', by: 'status-check', note: '', statusCheck: unknown })).toMatch(
      /nextCheckAtMs/,
    );
    expect(
      refusal(open, { to: 'open', by: 'status-check', note: '', statusCheck: applied, nextCheckAtMs: 9 }),
    ).toMatch(/resolves/);
    expect(
      refusal(open, { to: 'open', by: 'status-check', note: '', statusCheck: unknown, nextCheckAtMs: 9 }),
    ).toBeUndefined();
  });

  it('only a person moves a case out of needs_manual or resolved_failed', () => {
    for (const from of ['needs_manual', 'resolved_failed'] as const) {
      for (const to of CASE_TRANSITIONS[from]) {
        const statusCheck = to === 'resolved_failed' ? notApplied : applied;
        expect(refusal(inState(from), { to, by: 'status-check', note: 'n', statusCheck })).toMatch(
          /only a person/,
        );
      }
    }
  });

  it('a person must say why; escalation needs a note; actors are checked', () => {
    const open = inState('open');
    expect(refusal(open, { to: 'resolved_failed', by: OP, note: '  ' })).toMatch(/note/);
    expect(refusal(open, { to: 'needs_manual', by: 'status-check', note: '' })).toMatch(/note/);
    expect(
      refusal(open, { to: 'needs_manual', by: 'status-check', note: 'checks exhausted' }),
    ).toBeUndefined();
    expect(refusal(open, { to: 'needs_manual', by: 'operator:', note: 'n' })).toMatch(/actor/);
    expect(refusal(open, { to: 'needs_manual', by: 'root' as never, note: 'n' })).toMatch(/actor/);
    expect(refusal(open, { to: 'needs_manual', by: OP, note: 'x'.repeat(4001) })).toMatch(/4000/);
  });

  it('nextCheckAtMs only applies to a case that is or stays open', () => {
    expect(refusal(inState('open'), { to: 'needs_manual', by: OP, note: 'n', nextCheckAtMs: 5 })).toMatch(
      /only/,
    );
    expect(refusal(inState('open'), { to: 'open', by: OP, note: 'n', nextCheckAtMs: NaN })).toMatch(/finite/);
  });
});

describe('applyTransition', () => {
  it('records the check, history, resolution and version; clears the next check when leaving open', () => {
    const open = inState('open');
    const r = applyTransition(
      open,
      {
        to: 'resolved_succeeded',
        by: 'status-check',
        note: 'found R-1',
        statusCheck: { atMs: 1_200, answer: { state: 'applied', result: { id: 'R-1' } } },
      },
      1_300,
    );
    if (!r.ok) throw new Error(r.detail);
    expect(r.next).toMatchObject({
      state: 'resolved_succeeded',
      nextCheckAtMs: null,
      resolution: { by: 'status-check', note: 'found R-1', atMs: 1_300 },
      version: 2,
      updatedAtMs: 1_300,
      statusChecks: [{ atMs: 1_200, answer: { state: 'applied', result: { id: 'R-1' } } }],
      history: [
        { from: 'open', to: 'resolved_succeeded', by: 'status-check', note: 'found R-1', atMs: 1_300 },
      ],
    });
    expect(open.version).toBe(1);
  });

  it('a redrive re-opens due now (or when asked), clears the resolution and keeps it in history', () => {
    const failed = applyTransition(
      inState('open'),
      { to: 'resolved_failed', by: OP, note: 'not there' },
      2_000,
    );
    if (!failed.ok) throw new Error(failed.detail);
    const redriven = applyTransition(
      failed.next,
      { to: 'open', by: OP, note: 'downstream was lagging' },
      3_000,
    );
    if (!redriven.ok) throw new Error(redriven.detail);
    expect(redriven.next).toMatchObject({
      state: 'open',
      nextCheckAtMs: 3_000,
      resolution: null,
      version: 3,
    });
    expect(redriven.next.history.map((h) => h.to)).toEqual(['resolved_failed', 'open']);
    const later = applyTransition(
      failed.next,
      { to: 'open', by: OP, note: 'n', nextCheckAtMs: 9_000.2 },
      3_000,
    );
    expect(later.ok && later.next.nextCheckAtMs).toBe(9_001);
  });

  it('refuses a status check that is not JSON data', () => {
    const r = applyTransition(
      inState('open'),
      {
        to: 'resolved_succeeded',
        by: OP,
        note: 'n',
        statusCheck: { atMs: 1, answer: { state: 'applied', result: new Map() } },
      },
      1,
    );
    expect(r).toEqual({ ok: false, detail: 'statusCheck must be JSON data' });
  });
});

describe('matchesExpected and dueBound', () => {
  it('compares state, or state and version', () => {
    const c = inState('open');
    expect(matchesExpected(c, 'open')).toBe(true);
    expect(matchesExpected(c, 'needs_manual')).toBe(false);
    expect(matchesExpected(c, { state: 'open', version: 1 })).toBe(true);
    expect(matchesExpected(c, { state: 'open', version: 2 })).toBe(false);
  });

  it('floors the due bound and refuses non-finite ones', () => {
    expect(dueBound(10.9)).toBe(10);
    expect(() => dueBound(NaN)).toThrow(ToolgateError);
  });
});
