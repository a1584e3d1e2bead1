import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryIdempotencyStore } from '../../../libs/adapters/memory/index.js';
import { argumentsFingerprint } from '../../../libs/core/idempotency-key.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import type { DeadLetterEvent } from '../../../libs/events/contracts.js';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import type { IdempotencyStore, StoredResult } from '../../../libs/ports/idempotency-store.js';
import { closeAfterEach } from '../../helpers/close-after-each.js';
import { createHarness, deadLetter, reconciledTool, T0, UNRESOLVED_RECORD, type Harness } from './harness.js';

/**
 * A redriven case whose call was re-submitted is closed from the answer the executor recorded under
 * the call's idempotency key, read without changing it; only a status check used to close it.
 */
const ARGS = { taxpayerId: 'TP-1', year: 2024 };
const FP = argumentsFingerprint(ARGS);
const DAY_MS = 86_400_000;
/** The harness's grace before the first visit after a re-submission. */
const GRACE_MS = 5_000;

let h: Harness;
closeAfterEach(() => h);

const keyOf = (callId: string): string => `tg1:key-${callId}`;
const stored = (outcome: string, result: unknown): StoredResult => ({
  outcome,
  result,
  completedAtMs: T0 + 100,
});

/** A dead-lettered call of `tool`, redriven (re-submitted) by a person; returns the open case. */
async function resubmitted(
  callId: string,
  tool = 'send_wire',
  reason: DeadLetterEvent['reason'] = 'EXHAUSTED',
): Promise<ReconciliationCase> {
  await h.reconciler.start();
  await h.publishDeadLetter(deadLetter(h.topics, { callId, reason, tool, args: ARGS }));
  const c = await h.triaged({ callId });
  expect(c.state).toBe('needs_manual');
  const outcome = await h.ops.redrive(c.caseId, {
    by: 'ann',
    note: 'downstream is back',
    principalAssertion: 'eyJhbGciOiJFZERTQSJ9.e30.sig',
  });
  expect(outcome).toMatchObject({ ok: true, resubmitted: true, case: { state: 'open' } });
  return outcome.ok ? outcome.case : c;
}

/** What the executor leaves for the re-submission: a claim, and optionally its completed answer. */
async function executorRuns(callId: string, answer?: StoredResult, leaseMs = 60_000): Promise<void> {
  const claim = await h.idempotency.claim(keyOf(callId), FP, 'executor-1', leaseMs);
  expect(claim.kind).toBe('claimed');
  if (answer !== undefined) {
    expect(await h.idempotency.complete(keyOf(callId), 'executor-1', answer, DAY_MS)).toBe(true);
  }
}

/** Registers another tool taking the filing call's arguments (`def` gives the rest). */
function registerOnFilingArgs(def: Omit<Parameters<typeof reconciledTool>[0], 'input'>): void {
  h.registry.register(
    reconciledTool({ input: z.object({ taxpayerId: z.string(), year: z.number() }), ...def }),
  );
}

async function caseOf(callId: string): Promise<ReconciliationCase> {
  const c = await h.cases.get({ callId });
  if (c === undefined) throw new Error(`no case for ${callId}`);
  return c;
}

/** Nothing went out for the call: no result, no settled record (it still holds `answer`). */
async function expectUntouched(callId: string, answer: StoredResult): Promise<void> {
  expect(h.results).toHaveLength(0);
  expect(await h.idempotency.peek(keyOf(callId))).toEqual({
    kind: 'completed',
    fingerprint: FP,
    stored: answer,
  });
}

describe('a re-submitted call whose tool has no status check: the recorded answer decides', () => {
  it('SUCCESS → resolved_succeeded with the recorded result; nothing answered or settled', async () => {
    h = await createHarness();
    await resubmitted('c-ok');
    const answer = stored('SUCCESS', { wireId: 'W-1' });
    await executorRuns('c-ok', answer);
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-ok');
    expect(c.state).toBe('resolved_succeeded');
    expect(c.resolution).toMatchObject({ by: 'status-check' });
    expect(c.resolution!.note).toMatch(/idempotency record answers SUCCESS \(send_wire@1\.0\.0\)/);
    expect(c.statusChecks.at(-1)).toEqual({
      atMs: T0 + GRACE_MS,
      answer: { state: 'applied', result: { wireId: 'W-1' } },
    });
    await expectUntouched('c-ok', answer);
    expect(h.checks).toHaveLength(0);
  });

  it('EXECUTION_ERROR BAD_OUTPUT → resolved_succeeded: the effect happened, only its output was refused', async () => {
    h = await createHarness();
    await resubmitted('c-bad-output');
    const answer = stored('EXECUTION_ERROR', { code: 'BAD_OUTPUT', message: 'output refused' });
    await executorRuns('c-bad-output', answer);
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-bad-output');
    expect(c.state).toBe('resolved_succeeded');
    expect(c.resolution!.note).toMatch(
      /answers EXECUTION_ERROR \(BAD_OUTPUT\): the tool ran and its effect happened/,
    );
    expect(c.statusChecks.at(-1)!.answer).toEqual({ state: 'applied', result: null });
    await expectUntouched('c-bad-output', answer);
  });

  it('EXECUTION_ERROR that it was not carried out → resolved_failed', async () => {
    h = await createHarness();
    await resubmitted('c-failed');
    const answer = stored('EXECUTION_ERROR', { code: 'TIMEOUT', message: 'confirmed not carried out' });
    await executorRuns('c-failed', answer);
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-failed');
    expect(c.state).toBe('resolved_failed');
    expect(c.resolution!.note).toMatch(/answers EXECUTION_ERROR \(TIMEOUT\): it was not carried out/);
    expect(c.statusChecks.at(-1)!.answer).toEqual({ state: 'not-applied' });
    await expectUntouched('c-failed', answer);
  });

  it('UNRESOLVED again → needs_manual at once, saying so; never succeeded', async () => {
    h = await createHarness();
    await resubmitted('c-unknown');
    await executorRuns('c-unknown', UNRESOLVED_RECORD);
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-unknown');
    expect(c.state).toBe('needs_manual');
    expect(c.history.at(-1)!.note).toMatch(/^The call was re-submitted and ended UNRESOLVED again/);
    expect(c.history.at(-1)!.note).not.toMatch(/has no status check/);
    await expectUntouched('c-unknown', UNRESOLVED_RECORD);
  });

  it('an outcome it does not know → needs_manual, never resolved', async () => {
    h = await createHarness();
    await resubmitted('c-odd');
    const answer = stored('SOMETHING_NEW', { code: 'X' });
    await executorRuns('c-odd', answer);
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-odd');
    expect(c.state).toBe('needs_manual');
    expect(c.history.at(-1)!.note).toMatch(
      /answers "SOMETHING_NEW", an outcome this reconciler does not know/,
    );
  });

  it('a record of other arguments under the key → needs_manual: the re-submission is a conflict', async () => {
    h = await createHarness();
    await resubmitted('c-conflict');
    await h.idempotency.claim(keyOf('c-conflict'), 'other-fingerprint', 'executor-1', 60_000);
    await h.idempotency.complete(
      keyOf('c-conflict'),
      'executor-1',
      stored('SUCCESS', { wireId: 'W-9' }),
      DAY_MS,
    );
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-conflict');
    expect(c.state).toBe('needs_manual');
    expect(c.history.at(-1)!.note).toMatch(
      /record of other arguments, so the re-submission is refused as a conflict/,
    );
  });

  it('in flight → rescheduled (the claim untouched), then closed once the executor completes', async () => {
    h = await createHarness();
    await resubmitted('c-running');
    await executorRuns('c-running');
    await h.clock.advance(GRACE_MS);
    let c = await caseOf('c-running');
    expect(c.state).toBe('open');
    // The next wait of the schedule (the first one was the re-submission's grace).
    expect(c.nextCheckAtMs).toBe(T0 + GRACE_MS + 2_000);
    expect(c.history.at(-1)!.note).toMatch(
      /^answer check 1 of 5: the re-submission is running \(executor-1\)/,
    );
    expect(c.statusChecks.at(-1)!.answer).toEqual({ state: 'unknown' });
    // The peek took nothing: the executor still owns its claim and completes it.
    const answer = stored('SUCCESS', { wireId: 'W-2' });
    expect(await h.idempotency.complete(keyOf('c-running'), 'executor-1', answer, DAY_MS)).toBe(true);
    await h.clock.advance(2_000);
    c = await caseOf('c-running');
    expect(c.state).toBe('resolved_succeeded');
    expect(c.statusChecks.map((s) => s.answer.state)).toEqual(['unknown', 'applied']);
  });

  it('a lapsed lease → rescheduled, and left for the next delivery to take over', async () => {
    h = await createHarness();
    await resubmitted('c-stopped');
    await executorRuns('c-stopped', undefined, 1_000);
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-stopped');
    expect(c.state).toBe('open');
    expect(c.history.at(-1)!.note).toMatch(
      /\(executor-1\) stopped mid-call; the next delivery takes it over/,
    );
    expect(await h.idempotency.claim(keyOf('c-stopped'), FP, 'executor-2', 60_000)).toMatchObject({
      kind: 'taken-over',
      previousOwner: 'executor-1',
    });
  });

  it('no record through the whole schedule → needs_manual, saying no answer was recorded', async () => {
    h = await createHarness();
    await resubmitted('c-silent');
    await h.clock.advance(GRACE_MS + 31_000);
    const c = await caseOf('c-silent');
    expect(c.state).toBe('needs_manual');
    expect(c.statusChecks.map((s) => s.atMs - T0)).toEqual([5_000, 7_000, 11_000, 19_000, 35_000]);
    const note = c.history.at(-1)!.note;
    expect(note).toMatch(
      /^The call was re-submitted and its idempotency record never showed the executor's answer/,
    );
    expect(note).toMatch(/5 status checks made this round.*no answer recorded yet/);
    expect(await h.idempotency.peek(keyOf('c-silent'))).toEqual({ kind: 'absent' });
  });

  it('the store unreadable → counted as not yet, rescheduled', async () => {
    const inner = new MemoryIdempotencyStore(new ManualClock(T0));
    const down: IdempotencyStore = {
      claim: (...a) => inner.claim(...a),
      complete: (...a) => inner.complete(...a),
      release: (...a) => inner.release(...a),
      settle: (...a) => inner.settle(...a),
      peek: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379')),
    };
    h = await createHarness({ idempotency: down });
    await resubmitted('c-down');
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-down');
    expect(c.state).toBe('open');
    expect(c.history.at(-1)!.note).toMatch(/the idempotency store could not be read \(connect ECONNREFUSED/);
  });
});

describe('other re-submitted calls', () => {
  it('UNRESOLVED of a forwards-key tool: answered SUCCESS by the executor once retired → succeeded', async () => {
    h = await createHarness();
    registerOnFilingArgs({
      name: 'move_funds',
      description: 'Move funds; the bank deduplicates on the forwarded key.',
      output: z.object({ movementId: z.string() }),
      owner: 'payments-team',
      retrySafety: { kind: 'forwards-key' },
    });
    await h.recordUnresolved(keyOf('c-keyed'), ARGS);
    await h.reconciler.start();
    await h.publishDeadLetter(deadLetter(h.topics, { callId: 'c-keyed', tool: 'move_funds', args: ARGS }));
    await h.triaged({ callId: 'c-keyed' });
    await h.clock.advance(1_000);
    const manual = await caseOf('c-keyed');
    expect(manual.state).toBe('needs_manual');
    expect(manual.history.at(-1)!.note).toMatch(/has no status check/);

    const redriven = await h.ops.redrive(manual.caseId, {
      by: 'ann',
      note: 'the bank dedupes; run it again',
      principalAssertion: 'eyJhbGciOiJFZERTQSJ9.e30.sig',
    });
    expect(redriven).toMatchObject({ ok: true, resubmitted: true });
    await h.clock.advance(1);
    const answer = stored('SUCCESS', { movementId: 'M-1' });
    await executorRuns('c-keyed', answer);
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-keyed');
    expect(c.state).toBe('resolved_succeeded');
    expect(c.statusChecks.at(-1)!.answer).toEqual({ state: 'applied', result: { movementId: 'M-1' } });
    await expectUntouched('c-keyed', answer);
  });

  it('a tool with a status check: a recorded answer closes the case without running the check', async () => {
    h = await createHarness();
    await resubmitted('c-filing', 'submit_filing');
    const answer = stored('SUCCESS', { confirmation: 'CNF-3', status: 'accepted' });
    await executorRuns('c-filing', answer);
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-filing');
    expect(c.state).toBe('resolved_succeeded');
    expect(h.checks).toHaveLength(0);
    await expectUntouched('c-filing', answer);
  });

  it('a read-only tool without a status check keeps no record: to a person at once, saying why', async () => {
    h = await createHarness();
    registerOnFilingArgs({
      name: 'lookup_filing',
      description: 'Look a filing up.',
      output: z.object({ status: z.string() }),
      owner: 'filings-team',
      stateChanging: false,
    });
    await resubmitted('c-lookup', 'lookup_filing');
    await h.clock.advance(GRACE_MS);
    const c = await caseOf('c-lookup');
    expect(c.state).toBe('needs_manual');
    expect(c.history.at(-1)!.note).toMatch(
      /lookup_filing@1\.0\.0 is read-only: it keeps no idempotency record/,
    );
    expect(c.statusChecks).toHaveLength(0);
  });
});
