import { describe, expect, it } from 'vitest';
import type { CaseStore, ReconciliationCase } from '../../../libs/ports/case-store.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import {
  createOperations,
  type Operations,
  type OperationsDeps,
} from '../../../libs/reconcile/operations.js';
import { closeAfterEach } from '../../helpers/close-after-each.js';
import {
  createHarness,
  deadLetter,
  eventually,
  FILING_ARGS,
  T0,
  UNRESOLVED_RECORD,
  type Harness,
} from './harness.js';

let h: Harness;
closeAfterEach(() => h);

/** An UNRESOLVED case whose five status checks all answered unknown: needs_manual. */
async function manualCase(callId: string): Promise<ReconciliationCase> {
  await h.openUnresolved(callId);
  await h.clock.advance(31_000);
  const c = (await h.cases.get({ callId }))!;
  expect(c.state).toBe('needs_manual');
  return c;
}

describe('operations: reading cases', () => {
  it('lists by state and tool, and shows a case with its request and the actions open to it', async () => {
    h = await createHarness();
    const c = await manualCase('c-show');
    await h.publishDeadLetter(
      deadLetter(h.topics, { callId: 'c-other', reason: 'EXHAUSTED', tool: 'send_wire' }),
    );
    await h.triaged({ callId: 'c-other' });
    await h.publishDeadLetter(deadLetter(h.topics, { callId: 'c-fresh' }));
    await h.triaged({ callId: 'c-fresh' });

    expect((await h.ops.listCases({ state: 'needs_manual' })).map((x) => x.callId).sort()).toEqual([
      'c-other',
      'c-show',
    ]);
    expect((await h.ops.listCases({ tool: 'send_wire' })).map((x) => x.callId)).toEqual(['c-other']);
    expect((await h.ops.listCases({ state: 'open' })).map((x) => x.callId)).toEqual(['c-fresh']);

    const view = await h.ops.showCase(c.caseId);
    expect(view).toMatchObject({
      case: { caseId: c.caseId, state: 'needs_manual' },
      request: { callId: 'c-show', arguments: FILING_ARGS, replyPartition: 2 },
      checksThisRound: 5,
      actions: ['resolveByHand', 'redrive'],
    });
    expect((await h.ops.showCase({ callId: 'c-fresh' }))!.actions).toEqual(['resolveByHand']);
    expect(await h.ops.showCase('no-such-case')).toBeUndefined();
  });
});

describe('operations: resolve by hand', () => {
  it('succeeded with a result: settles, answers and audits as the operator; the result is redacted', async () => {
    h = await createHarness();
    const c = await manualCase('c-hand');
    const outcome = await h.ops.resolveByHand(c.caseId, {
      outcome: 'succeeded',
      by: 'ann',
      note: 'The filing portal shows CNF-3 accepted.',
      result: { confirmation: 'CNF-3', status: 'accepted', portalSession: 'should not leak' },
    });
    expect(outcome).toMatchObject({
      ok: true,
      case: { state: 'resolved_succeeded', resolution: { by: 'operator:ann' } },
      delivery: { settled: true, audited: true, answered: true, complete: true },
    });
    const redacted = { confirmation: 'CNF-3', status: 'accepted' };
    expect(await h.claimAgain('c-hand')).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'SUCCESS', result: redacted },
    });
    await eventually(() => h.results[0]);
    expect(h.results[0]!.event).toMatchObject({
      source: 'operator',
      producerId: 'operator:ann',
      outcome: 'SUCCESS',
    });
    expect(JSON.parse(h.results[0]!.event.payloadJson!)).toEqual(redacted);
    await eventually(() => h.audits[0]);
    expect(h.audits[0]).toMatchObject({
      source: 'operator',
      producerId: 'operator:ann',
      principalId: 'operator:ann',
      outcome: 'SUCCESS',
    });
    const reason = h.audits[0]!.decisions[0]!.reason;
    expect(reason).toContain('operator:ann');
    expect(reason).toContain('The filing portal shows CNF-3 accepted.');
    expect(reason).toContain(`case ${c.caseId}; on behalf of ${c.principalId}`);
    expect(c.principalId).not.toBe('operator:ann');
  });

  it('refuses a result that breaks the output schema, and writes nothing', async () => {
    h = await createHarness();
    const c = await manualCase('c-bad');
    const outcome = await h.ops.resolveByHand(c.caseId, {
      outcome: 'succeeded',
      by: 'ann',
      note: 'confirmed',
      result: { confirmation: 7 },
    });
    expect(outcome).toMatchObject({ ok: false, reason: 'invalid-result' });
    expect((await h.cases.get(c.caseId))!).toEqual(c);
    expect(await h.claimAgain('c-bad')).toEqual({ kind: 'completed', stored: UNRESOLVED_RECORD });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(h.results).toHaveLength(0);
    expect(h.audits).toHaveLength(0);
  });

  it('failed: settles a retryable EXECUTION_ERROR and answers it; refuses a note-less or stale decision', async () => {
    h = await createHarness();
    const c = await manualCase('c-fail');
    expect(await h.ops.resolveByHand(c.caseId, { outcome: 'failed', by: 'bob', note: '  ' })).toMatchObject({
      ok: false,
      reason: 'not-allowed',
    });
    const outcome = await h.ops.resolveByHand(c.caseId, {
      outcome: 'failed',
      by: 'operator:bob',
      note: 'Not in the portal.',
    });
    expect(outcome).toMatchObject({
      ok: true,
      case: { state: 'resolved_failed', resolution: { by: 'operator:bob' } },
    });
    expect(await h.claimAgain('c-fail')).toMatchObject({
      stored: { outcome: 'EXECUTION_ERROR', result: { code: 'TIMEOUT' } },
    });
    await eventually(() => h.results[0]);
    expect(h.results[0]!.event).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      error: { code: 'TIMEOUT', retryable: true },
    });
    // resolved_failed cannot be resolved again (only redriven).
    expect(
      await h.ops.resolveByHand(c.caseId, { outcome: 'succeeded', by: 'bob', note: 'changed my mind' }),
    ).toMatchObject({
      ok: false,
      reason: 'not-allowed',
    });
    expect(await h.ops.resolveByHand('missing', { outcome: 'failed', by: 'bob', note: 'x' })).toMatchObject({
      ok: false,
      reason: 'not-found',
    });
  });
});

describe('operations: redrive', () => {
  it('reopens an UNRESOLVED case for a new round of status checks, audited', async () => {
    h = await createHarness();
    const c = await manualCase('c-redrive');
    const redriveAt = h.clock.now();
    h.script.push(
      { state: 'unknown' },
      { state: 'applied', result: { confirmation: 'CNF-8', status: 'accepted' } },
    );
    const outcome = await h.ops.redrive(c.caseId, { by: 'ann', note: 'The portal was down; try again.' });
    expect(outcome).toMatchObject({
      ok: true,
      resubmitted: false,
      case: { state: 'open', nextCheckAtMs: redriveAt + 1_000 },
      delivery: { audited: true, answered: false, settled: false },
    });
    await eventually(() => h.audits[0]);
    expect(h.audits[0]).toMatchObject({ source: 'operator', outcome: 'UNRESOLVED' });
    expect(h.audits[0]!.decisions[0]!.reason).toMatch(/redriven by operator:ann/);

    await h.clock.advance(3_000);
    // The new round starts again from check 1 of 5, at the round's own schedule.
    expect(h.checks.slice(5).map((x) => [x.atMs - redriveAt, x.inv.attempt])).toEqual([
      [1_000, 1],
      [3_000, 2],
    ]);
    const after = (await h.cases.get(c.caseId))!;
    expect(after.state).toBe('resolved_succeeded');
    expect(after.statusChecks).toHaveLength(7);
    expect(await h.claimAgain('c-redrive')).toMatchObject({ stored: { outcome: 'SUCCESS' } });
    await eventually(() => h.results[0]);
    expect(h.results[0]!.event.source).toBe('reconciler');
  });

  it('re-submits an EXHAUSTED call with the same call id and key, given an assertion', async () => {
    h = await createHarness();
    await h.reconciler.start();
    await h.publishDeadLetter(deadLetter(h.topics, { callId: 'c-again', reason: 'EXHAUSTED' }));
    const c = await h.triaged({ callId: 'c-again' });
    expect(c.state).toBe('needs_manual');

    expect(await h.ops.redrive(c.caseId, { by: 'ann', note: 'downstream is back' })).toMatchObject({
      ok: false,
      reason: 'needs-assertion',
    });
    expect((await h.cases.get(c.caseId))!.state).toBe('needs_manual');

    const outcome = await h.ops.redrive(c.caseId, {
      by: 'ann',
      note: 'downstream is back',
      principalAssertion: 'eyJhbGciOiJFZERTQSJ9.e30.sig',
    });
    expect(outcome).toMatchObject({
      ok: true,
      resubmitted: true,
      case: { state: 'open', nextCheckAtMs: T0 + 5_000 },
    });
    await eventually(() => h.calls[0]);
    expect(h.calls).toHaveLength(1);
    expect(h.calls[0]).toMatchObject({
      callId: 'c-again',
      idempotencyKey: 'tg1:key-c-again',
      principalAssertion: 'eyJhbGciOiJFZERTQSJ9.e30.sig',
      replyPartition: 2,
      deadlineMs: null,
    });
    expect(JSON.parse(h.calls[0]!.argumentsJson)).toEqual(FILING_ARGS);

    // The executor answers a re-submitted call itself: an "applied" check only closes the case.
    h.script.push(
      { state: 'not-applied' },
      { state: 'applied', result: { confirmation: 'CNF-2', status: 'accepted' } },
    );
    await h.clock.advance(5_000 + 2_000);
    const closed = (await h.cases.get(c.caseId))!;
    expect(closed.state).toBe('resolved_succeeded');
    expect(closed.statusChecks.map((s) => s.answer.state)).toEqual(['unknown', 'applied']);
    expect(closed.history.map((e) => e.note)).toContainEqual(expect.stringMatching(/not applied yet/));
    await eventually(() => h.audits.length === 1 || undefined);
    expect(h.results).toHaveLength(0);
  });

  it('refuses what cannot be redriven: open or succeeded cases, poison without a request', async () => {
    h = await createHarness();
    await h.reconciler.start();
    await h.publishRaw(h.topics.dlq, Buffer.from([0, 0, 0, 0, 9, 1, 2]));
    const poison = await eventually(async () => (await h.ops.listCases({ state: 'needs_manual' }))[0]);
    expect(
      await h.ops.redrive(poison.caseId, { by: 'ann', note: 'retry', principalAssertion: 'x.y.z' }),
    ).toMatchObject({
      ok: false,
      reason: 'not-redrivable',
    });
    await h.publishDeadLetter(deadLetter(h.topics, { callId: 'c-still-open' }));
    const open = await h.triaged({ callId: 'c-still-open' });
    expect(await h.ops.redrive(open.caseId, { by: 'ann', note: 'why not' })).toMatchObject({
      ok: false,
      reason: 'not-allowed',
    });
    expect(h.calls).toHaveLength(0);
  });
});

describe('operations: a resolution and a redrive of one case decide once', () => {
  /** The harness's operations with some parts replaced. */
  function operationsWith(parts: Partial<OperationsDeps>): Operations {
    return createOperations({
      cases: h.cases,
      tools: h.registry,
      publisher: h.bus,
      codec: h.codec,
      topics: h.topics,
      idempotency: h.idempotency,
      clock: h.clock,
      logger: silentLogger,
      backoff: { baseDelayMs: 10, maxDelayMs: 10 },
      replyTopics: {},
      resultTtlMs: 60_000,
      deliveryTimeoutMs: 50,
      ...parts,
    });
  }

  async function exhaustedCase(callId: string): Promise<ReconciliationCase> {
    await h.reconciler.start();
    await h.publishDeadLetter(deadLetter(h.topics, { callId, reason: 'EXHAUSTED' }));
    const c = await h.triaged({ callId });
    expect(c.state).toBe('needs_manual');
    return c;
  }

  it('refuses to resolve a call an executor is running right now, and writes nothing', async () => {
    h = await createHarness();
    const c = await exhaustedCase('c-running');
    // A re-submission is being executed: an executor holds the key.
    expect((await h.claimAgain('c-running')).kind).toBe('claimed');
    const answer = await h.ops.resolveByHand(c.caseId, {
      outcome: 'succeeded',
      by: 'ann',
      note: 'seen in the ledger',
    });
    expect(answer).toMatchObject({
      ok: false,
      reason: 'not-allowed',
      detail: expect.stringMatching(/running/),
    });
    expect((await h.cases.get(c.caseId))!.version).toBe(c.version);
    expect(h.audits).toHaveLength(0);
  });

  it('records a resolution of an EXHAUSTED call in its idempotency record: a re-run is answered with it', async () => {
    h = await createHarness();
    const c = await exhaustedCase('c-rerun');
    const answer = await h.ops.resolveByHand(c.caseId, {
      outcome: 'succeeded',
      by: 'ann',
      note: 'done by hand',
    });
    expect(answer).toMatchObject({ ok: true, delivery: { settled: true } });
    expect(await h.claimAgain('c-rerun')).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'SUCCESS' },
    });
  });

  it('a failed verdict on an EXHAUSTED call answers re-runs, so a redrive refuses to re-submit it', async () => {
    h = await createHarness();
    const c = await exhaustedCase('c-failed');
    const answer = await h.ops.resolveByHand(c.caseId, { outcome: 'failed', by: 'ann', note: 'never sent' });
    expect(answer).toMatchObject({ ok: true, delivery: { settled: true } });
    expect(await h.claimAgain('c-failed')).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'EXECUTION_ERROR' },
    });
    const redriven = await h.ops.redrive(c.caseId, { by: 'ann', note: 'again', principalAssertion: 'x.y.z' });
    expect(redriven).toMatchObject({
      ok: false,
      reason: 'not-redrivable',
      detail: expect.stringMatching(/new step/),
    });
    expect((await h.cases.get(c.caseId))!.state).toBe('resolved_failed');
    expect(h.calls).toHaveLength(0);
  });

  it('a resolution that loses the case to a redrive releases the key it held', async () => {
    h = await createHarness();
    const c = await exhaustedCase('c-lost');
    const cases = h.cases;
    // A redrive moves the case between this resolution's read (and hold) and its write.
    const racing: CaseStore = {
      openFromDeadLetter: (dl) => cases.openFromDeadLetter(dl),
      get: (ref) => cases.get(ref),
      list: (filter) => cases.list(filter),
      countByState: (filter) => cases.countByState(filter),
      async transition(caseId, change, expected) {
        await cases.transition(
          caseId,
          { to: 'open', by: 'operator:bob', note: 're-submitting', nextCheckAtMs: T0 + 60_000 },
          expected,
        );
        return cases.transition(caseId, change, expected);
      },
    };
    const answer = await operationsWith({ cases: racing }).resolveByHand(c.caseId, {
      outcome: 'succeeded',
      by: 'ann',
      note: 'done',
    });
    expect(answer).toMatchObject({ ok: false, reason: 'state-changed' });
    // No claim was left behind: the re-submission can run.
    expect((await h.claimAgain('c-lost')).kind).toBe('claimed');
  });

  it('a re-submission that cannot be published hands the case back to a person', async () => {
    const failing = { publish: () => Promise.reject(new Error('broker down')) };
    h = await createHarness();
    const c = await exhaustedCase('c-unpublished');
    const ops = operationsWith({ publisher: failing });
    const redriving = ops.redrive(c.caseId, { by: 'ann', note: 'retry', principalAssertion: 'x.y.z' });
    await eventually(async () => ((await h.cases.get(c.caseId))!.state === 'open' ? true : undefined));
    await h.clock.advance(100);
    expect(await redriving).toMatchObject({
      ok: false,
      reason: 'not-allowed',
      case: { state: 'needs_manual' },
    });
    const back = (await h.cases.get(c.caseId))!;
    expect(back.history.at(-1)).toMatchObject({ from: 'open', to: 'needs_manual', by: 'operator:ann' });
    expect(h.calls).toHaveLength(0);
  });
});
