import { describe, expect, it } from 'vitest';
import { openForSuite } from '../../helpers/stack-lifecycle.js';
import { eventually } from '../audit-sink/event-stack.js';
import { startOperatorStack, type OperatorStack } from './operator-stack.js';

/**
 * The reconciler's automatic redrive on real Kafka, Postgres and Redis with the executor running: an
 * UNRESOLVED call of a tool that forwards its idempotency key is re-submitted by the reconciler
 * itself, signed with its own key (which the executor trusts), runs exactly once more, and its case
 * is closed from the executor's answer — no person involved. A tool with retry safety `none` still
 * goes to a person.
 */
let s: OperatorStack;
openForSuite(async () => (s = await startOperatorStack('auto_redrive', { autoRedriveGraceMs: 1_000 })), {
  openTimeoutMs: 120_000,
  closeTimeoutMs: 60_000,
});

describe('automatic redrive of an UNRESOLVED call', () => {
  it('forwards-key: re-submitted by the reconciler, run exactly once more, closed as succeeded', async () => {
    const { request } = await s.request('acct-auto', 'hangs', undefined, 'vault_transfer_keyed');
    await s.publish([request]);

    const answered = await eventually(
      'the automatic re-submission answered',
      async () => {
        const mine = (await s.results()).filter(
          (e) => e.callId === request.callId && e.source === 'executor',
        );
        return mine.find((e) => e.outcome === 'SUCCESS');
      },
      90_000,
    );
    expect(answered).toMatchObject({ outcome: 'SUCCESS', toolInvocations: 1 });

    const closed = await s.caseIn(request.callId, 'resolved_succeeded', 90_000);
    expect(closed.reason).toBe('UNRESOLVED');
    // Triaged, redriven automatically (never handed to a person), closed from the executor's answer.
    expect(closed.history.map((e) => [e.to, e.by, e.autoRedrive ?? false])).toEqual([
      ['open', 'status-check', false],
      ['open', 'status-check', true],
      ['resolved_succeeded', 'status-check', false],
    ]);
    expect(closed.history[1]!.note).toMatch(/^automatic redrive 1 of 2: the outcome is unknown/);
    expect(closed.resolution!.note).toMatch(/idempotency record answers SUCCESS/);
    await s.drained();
    // The first (hung) run and the re-submission's: exactly one more.
    expect(s.runs(request.idempotencyKey)).toBe(2);
    const reconcilerAnswers = (await s.results()).filter(
      (e) => e.callId === request.callId && e.source === 'reconciler',
    );
    expect(reconcilerAnswers).toEqual([]);
  }, 180_000);

  it('retry safety none: a person; never run again', async () => {
    const { request } = await s.request('acct-plain', 'hangs');
    await s.publish([request]);
    const manual = await s.caseIn(request.callId, 'needs_manual', 60_000);
    expect(manual.history.some((e) => e.autoRedrive === true)).toBe(false);
    expect(manual.history.at(-1)!.note).toMatch(/retry safety "none"/);
    await s.drained();
    expect(s.runs(request.idempotencyKey)).toBe(1);
  }, 120_000);
});
