import { describe, expect, it } from 'vitest';
import { openForSuite } from '../../helpers/stack-lifecycle.js';
import { eventually } from '../audit-sink/event-stack.js';
import { startOperatorStack, type OperatorStack } from './operator-stack.js';

/**
 * Redriving a call whose outcome is unknown (UNRESOLVED), on real Kafka, Postgres and Redis with the
 * executor running: a tool that forwards its idempotency key is re-submitted and runs once more, and
 * its case is closed from the answer the executor recorded; a tool with retry safety `none` is
 * refused with the reason and nothing changes or runs.
 */
let s: OperatorStack;
openForSuite(async () => (s = await startOperatorStack('ops_redrive_safety')), {
  openTimeoutMs: 120_000,
  closeTimeoutMs: 60_000,
});

describe('redrive of an UNRESOLVED call', () => {
  it('forwards-key: re-submitted, run exactly once more, answered SUCCESS by the executor', async () => {
    const { request } = await s.request('acct-keyed', 'hangs', undefined, 'vault_transfer_keyed');
    await s.publish([request]);
    const manual = await s.caseIn(request.callId, 'needs_manual');
    expect(manual.reason).toBe('UNRESOLVED');
    expect(s.runs(request.idempotencyKey)).toBe(1);

    const shown = await s.ops.showCase(manual.caseId);
    expect(shown).toMatchObject({ actions: ['resolveByHand', 'redrive'], redrive: { kind: 'resubmit' } });

    const redriven = await s.ops.redrive(manual.caseId, {
      by: 'ann',
      note: 'the vault dedupes on the key; run it again',
      principalAssertion: await s.assertion(),
    });
    expect(redriven).toMatchObject({ ok: true, resubmitted: true, case: { state: 'open' } });

    const answered = await eventually('the re-submission answered', async () => {
      const mine = (await s.results()).filter((e) => e.callId === request.callId && e.source === 'executor');
      return mine.find((e) => e.outcome === 'SUCCESS');
    });
    expect(answered).toMatchObject({ outcome: 'SUCCESS', toolInvocations: 1 });
    await s.drained();
    // The first (hung) run and the re-submission's: exactly one more.
    expect(s.runs(request.idempotencyKey)).toBe(2);

    // The reconciler reads the executor's recorded answer (the tool has no status check) and closes
    // the case as succeeded, after the re-submission's grace, without answering the call again.
    const closed = await s.caseIn(request.callId, 'resolved_succeeded', 90_000);
    expect(closed.resolution).toMatchObject({
      by: 'status-check',
      note: expect.stringMatching(/idempotency record answers SUCCESS/),
    });
    expect(closed.statusChecks.at(-1)!.answer).toEqual({
      state: 'applied',
      result: { transfer_id: expect.stringMatching(/^TR-/), status: 'done' },
    });
    // Triaged, handed to a person (no status check), redriven, then closed at its first visit.
    expect(closed.history.map((e) => e.to)).toEqual(['open', 'needs_manual', 'open', 'resolved_succeeded']);
    const reconcilerAnswers = (await s.results()).filter(
      (e) => e.callId === request.callId && e.source === 'reconciler',
    );
    expect(reconcilerAnswers).toEqual([]);
    expect(s.runs(request.idempotencyKey)).toBe(2);
  }, 180_000);

  it('retry safety none: refused with the reason; the case, the record and the runs stay as they were', async () => {
    const { request } = await s.request('acct-plain', 'hangs');
    await s.publish([request]);
    const manual = await s.caseIn(request.callId, 'needs_manual');
    expect(s.runs(request.idempotencyKey)).toBe(1);

    const shown = await s.ops.showCase(manual.caseId);
    expect(shown).toMatchObject({ actions: ['resolveByHand'], redrive: { kind: 'refuse' } });

    const redriven = await s.ops.redrive(manual.caseId, {
      by: 'ann',
      note: 'try again',
      principalAssertion: await s.assertion(),
    });
    expect(redriven).toMatchObject({ ok: false, reason: 'not-redrivable' });
    expect(!redriven.ok && redriven.detail).toContain('retry safety "none"');
    expect(await s.cases.get(manual.caseId)).toEqual(manual);
    await s.drained();
    expect(s.runs(request.idempotencyKey)).toBe(1);
    const executorAnswers = (await s.results()).filter(
      (e) => e.callId === request.callId && e.source === 'executor',
    );
    expect(executorAnswers.map((e) => e.outcome)).toEqual(['UNRESOLVED']);
  }, 120_000);
});
