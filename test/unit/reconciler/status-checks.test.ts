import { describe, expect, it } from 'vitest';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import { createReconciler, type Reconciler } from '../../../services/reconciler/reconciler.js';
import { closeAfterEach } from '../../helpers/close-after-each.js';
import {
  createHarness,
  deadLetter,
  eventually,
  FILING_ARGS,
  T0,
  TENANT,
  TRACE,
  UNRESOLVED_RECORD,
  type Harness,
} from './harness.js';

let h: Harness;
closeAfterEach(() => h);

async function caseOf(callId: string): Promise<ReconciliationCase> {
  const c = await h.cases.get({ callId });
  if (c === undefined) throw new Error(`no case for ${callId}`);
  return c;
}

describe('reconciler: dead letters become cases', () => {
  it('opens one case per call, its first check one wait out, however often the letter comes', async () => {
    h = await createHarness();
    const letter = deadLetter(h.topics, { callId: 'c-open' });
    await h.reconciler.start();
    await h.publishDeadLetter(letter);
    await h.publishDeadLetter(letter);
    await h.publishDeadLetter({ ...letter, deadLetterId: 'UNRESOLVED:c-open:second-letter' });
    await h.drained();
    expect(await h.ops.listCases({})).toHaveLength(1);
    const c = await caseOf('c-open');
    expect(c).toMatchObject({
      state: 'open',
      reason: 'UNRESOLVED',
      callId: 'c-open',
      tool: 'submit_filing',
      idempotencyKey: 'tg1:key-c-open',
      nextCheckAtMs: T0 + 1_000,
      statusChecks: [],
    });
    expect(c.history).toHaveLength(1);
    expect(c.context.request).toMatchObject({ callId: 'c-open', arguments: FILING_ARGS });
    expect(h.checks).toHaveLength(0);
  });

  it('sends POISON and EXHAUSTED cases straight to a person, without a status check', async () => {
    h = await createHarness();
    await h.reconciler.start();
    await h.publishDeadLetter(
      deadLetter(h.topics, { callId: 'c-poison', reason: 'POISON', errorCode: 'MALFORMED_EVENT' }),
    );
    await h.publishDeadLetter(deadLetter(h.topics, { callId: 'c-exhausted', reason: 'EXHAUSTED' }));
    const poison = await h.triaged({ callId: 'c-poison' });
    const exhausted = await h.triaged({ callId: 'c-exhausted' });
    expect(poison.state).toBe('needs_manual');
    expect(poison.history[0]!.note).toMatch(/^POISON: .*MALFORMED_EVENT/);
    expect(exhausted.state).toBe('needs_manual');
    expect(exhausted.history[0]!.note).toMatch(/^EXHAUSTED: .*SERVER_ERROR.*not carried out/);
    expect(exhausted.history[0]!.note).toContain('call c-exhausted');
    await h.clock.advance(60_000);
    expect(h.checks).toHaveLength(0);
    expect(h.results).toHaveLength(0);
  });

  it('keeps an undecodable dead letter as a POISON case with its bytes', async () => {
    h = await createHarness();
    await h.reconciler.start();
    const garbage = Buffer.from('not an avro event at all');
    await h.publishRaw(h.topics.dlq, garbage);
    const ref = { deadLetterId: `POISON:${h.topics.dlq}/${partitionOfRaw(h)}@0` };
    const c = await eventually(async () => (await h.ops.listCases({}))[0]);
    expect(c).toMatchObject({ reason: 'POISON', state: 'needs_manual', callId: null });
    expect(c.deadLetterId).toBe(ref.deadLetterId);
    expect(Buffer.from(c.context.rawPayloadBase64 as string, 'base64')).toEqual(garbage);
  });
});

describe('reconciler: a case opened but never triaged', () => {
  it('is triaged by the due loop (first check one wait out), not checked early', async () => {
    h = await createHarness();
    h.script.push({ state: 'applied', result: { confirmation: 'CNF-4', status: 'accepted' } });
    const letter = deadLetter(h.topics, { callId: 'c-untriaged' });
    await h.recordUnresolved(letter.idempotencyKey!, FILING_ARGS);
    // As if the consumer stopped right after opening the case: open in the store, due now.
    const { case: opened } = await h.cases.openFromDeadLetter(letter);
    expect(opened).toMatchObject({ state: 'open', nextCheckAtMs: T0, history: [] });
    await h.reconciler.start();
    await h.clock.advance(0);
    expect(h.checks).toHaveLength(0);
    expect(await caseOf('c-untriaged')).toMatchObject({ state: 'open', nextCheckAtMs: T0 + 1_000 });
    await h.clock.advance(1_000);
    expect(h.checks.map((c) => c.atMs)).toEqual([T0 + 1_000]);
    expect((await caseOf('c-untriaged')).state).toBe('resolved_succeeded');
  });
});

describe('reconciler: status checks', () => {
  it('applied → resolved_succeeded; settled, answered and audited with the redacted result', async () => {
    h = await createHarness();
    h.script.push({
      state: 'applied',
      result: { confirmation: 'CNF-77', status: 'accepted', internalNote: 'secret' },
    });
    await h.openUnresolved('c-applied');

    await h.clock.advance(999);
    expect(h.checks).toHaveLength(0);
    await h.clock.advance(1);
    expect(h.checks).toHaveLength(1);
    const check = h.checks[0]!;
    expect(check.atMs).toBe(T0 + 1_000);
    expect(check.args).toEqual(FILING_ARGS);
    expect(check.inv.idempotencyKey).toBe('tg1:key-c-applied');
    expect(check.inv.ctx).toMatchObject({ tenant: TENANT, taskId: 'task-1', step: 3, traceId: TRACE });
    expect(check.inv.ctx.principal).toMatchObject({ kind: 'service', onBehalfOf: 'u-42' });
    expect(check.inv.signal).toBeInstanceOf(AbortSignal);

    const redacted = { confirmation: 'CNF-77', status: 'accepted' };
    const c = await caseOf('c-applied');
    expect(c.state).toBe('resolved_succeeded');
    expect(c.resolution).toMatchObject({ by: 'status-check' });
    expect(c.statusChecks).toEqual([{ atMs: T0 + 1_000, answer: { state: 'applied', result: redacted } }]);

    expect(await h.claimAgain('c-applied')).toEqual({
      kind: 'completed',
      stored: { outcome: 'SUCCESS', result: redacted, completedAtMs: T0 + 1_000 },
    });

    await eventually(() => (h.results.length === 1 && h.audits.length === 1) || undefined);
    const { event, message } = h.results[0]!;
    expect(message.partition).toBe(2);
    expect(event).toMatchObject({
      callId: 'c-applied',
      providerCallId: 'prov-c-applied',
      outcome: 'SUCCESS',
      source: 'reconciler',
      producerId: 'reconciler-1',
      error: null,
      toolInvocations: 0,
      idempotencyKey: 'tg1:key-c-applied',
    });
    expect(JSON.parse(event.payloadJson!)).toEqual(redacted);
    const audit = h.audits[0]!;
    expect(audit).toMatchObject({
      callId: 'c-applied',
      source: 'reconciler',
      outcome: 'SUCCESS',
      principalId: 'u-42',
      tenant: TENANT,
      resourceKey: `${TENANT}:filing:TP-1`,
      toolVersion: '1.0.0',
      attempts: [],
    });
    // The allow-list keeps `year` only; the result is the redacted one.
    expect(JSON.parse(audit.argumentsJson)).toEqual({ taxpayerId: '[redacted]', year: 2024 });
    expect(JSON.parse(audit.resultJson!)).toEqual(redacted);
    expect(audit.recordId).toBe(`reconciler:${c.caseId}:v${c.version}`);

    // Nothing more happens to a resolved case.
    await h.clock.advance(60_000);
    expect(h.checks).toHaveLength(1);
  });

  it('not-applied → resolved_failed; settled as a retryable EXECUTION_ERROR, answered and audited', async () => {
    h = await createHarness();
    h.script.push({ state: 'not-applied' });
    await h.openUnresolved('c-not-applied');
    await h.clock.advance(1_000);
    const c = await caseOf('c-not-applied');
    expect(c.state).toBe('resolved_failed');
    const again = await h.claimAgain('c-not-applied');
    expect(again).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'EXECUTION_ERROR', result: { code: 'TIMEOUT' } },
    });
    await eventually(() => (h.results.length === 1 && h.audits.length === 1) || undefined);
    expect(h.results[0]!.event).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      payloadJson: null,
      source: 'reconciler',
      error: { code: 'TIMEOUT', retryable: true },
    });
    expect(h.results[0]!.event.error!.message).toMatch(/not carried out.*new step/);
    expect(h.audits[0]).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      errorCode: 'TIMEOUT',
      source: 'reconciler',
    });
    expect(h.audits[0]!.decisions).toEqual([
      expect.objectContaining({ stage: 'execute', decision: 'refuse', code: 'TIMEOUT' }),
    ]);
  });

  it('unknown every time: checks after 1, 2, 4, 8, 16 s, then needs_manual; nothing settled or answered', async () => {
    h = await createHarness();
    await h.openUnresolved('c-unknown');
    await h.clock.advance(40_000);
    expect(h.checks.map((c) => c.atMs - T0)).toEqual([1_000, 3_000, 7_000, 15_000, 31_000]);
    expect(h.checks.map((c) => c.inv.attempt)).toEqual([1, 2, 3, 4, 5]);
    const c = await caseOf('c-unknown');
    expect(c.state).toBe('needs_manual');
    expect(c.statusChecks).toHaveLength(5);
    expect(c.statusChecks.every((s) => s.answer.state === 'unknown')).toBe(true);
    const note = c.history.at(-1)!.note;
    expect(note).toContain('5 status checks made this round');
    expect(note).toContain('call c-unknown');
    expect(note).toContain('idempotency key tg1:key-c-unknown');
    expect(note).toMatch(/resolve the case by hand.*or redrive it/);
    expect(await h.claimAgain('c-unknown')).toEqual({ kind: 'completed', stored: UNRESOLVED_RECORD });
    expect(h.results).toHaveLength(0);
    expect(h.audits).toHaveLength(0);
    await h.clock.advance(60_000);
    expect(h.checks).toHaveLength(5);
  });

  it('honours a configured schedule', async () => {
    h = await createHarness({ checkScheduleMs: [200, 300, 500] });
    await h.openUnresolved('c-schedule');
    await h.clock.advance(5_000);
    expect(h.checks.map((c) => c.atMs - T0)).toEqual([200, 500, 1_000]);
    expect((await caseOf('c-schedule')).state).toBe('needs_manual');
  });

  it('counts a check that throws or hangs past its timeout as unknown, and keeps checking', async () => {
    h = await createHarness({ checkScheduleMs: [1_000, 1_000, 1_000], checkTimeoutMs: 500 });
    h.script.push(new Error('connection reset'), 'hang', {
      state: 'applied',
      result: { confirmation: 'CNF-9', status: 'accepted' },
    });
    await h.openUnresolved('c-flaky');
    await h.clock.advance(10_000);
    expect(h.checks.map((c) => c.atMs - T0)).toEqual([1_000, 2_000, 3_500]);
    const c = await caseOf('c-flaky');
    expect(c.state).toBe('resolved_succeeded');
    expect(c.statusChecks.map((s) => s.answer.state)).toEqual(['unknown', 'unknown', 'applied']);
    const notes = c.history.map((e) => e.note);
    expect(notes[1]).toMatch(/check 1 of 3: the check failed: connection reset/);
    expect(notes[2]).toMatch(/check 2 of 3: the check timed out after 500 ms/);
    // The hung check's signal was aborted at its timeout.
    expect(h.checks[1]!.inv.signal.aborted).toBe(true);
  });

  it('applied with a result that breaks the output schema: succeeded, but answered as BAD_OUTPUT', async () => {
    h = await createHarness();
    h.script.push({ state: 'applied', result: { confirmation: 42 } });
    await h.openUnresolved('c-bad-output');
    await h.clock.advance(1_000);
    const c = await caseOf('c-bad-output');
    expect(c.state).toBe('resolved_succeeded');
    expect(c.statusChecks[0]!.answer).toEqual({ state: 'applied', result: null });
    expect(await h.claimAgain('c-bad-output')).toMatchObject({
      stored: { outcome: 'EXECUTION_ERROR', result: { code: 'BAD_OUTPUT' } },
    });
    await eventually(() => h.results[0]);
    expect(h.results[0]!.event).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      payloadJson: null,
      error: { code: 'BAD_OUTPUT', retryable: false },
    });
  });

  it('hands a call whose tool has no status check to a person at its first due time', async () => {
    h = await createHarness();
    const letter = deadLetter(h.topics, { callId: 'c-wire', tool: 'send_wire', args: { amount: 10 } });
    await h.reconciler.start();
    await h.publishDeadLetter(letter);
    await h.triaged({ callId: 'c-wire' });
    await h.clock.advance(1_000);
    const c = await caseOf('c-wire');
    expect(c.state).toBe('needs_manual');
    expect(c.history.at(-1)!.note).toMatch(/send_wire@1\.0\.0 has no status check \(retry safety "none"\)/);
    expect(h.checks).toHaveLength(0);
    expect(h.results).toHaveLength(0);
  });

  it('hands a call to a person when its tool is unknown or its reply address is not allowed', async () => {
    h = await createHarness();
    await h.reconciler.start();
    await h.publishDeadLetter(deadLetter(h.topics, { callId: 'c-ghost', tool: 'no_such_tool' }));
    await h.triaged({ callId: 'c-ghost' });
    await h.clock.advance(1_000);
    expect((await caseOf('c-ghost')).history.at(-1)!.note).toMatch(/^The tool cannot be resolved/);

    h.script.push({ state: 'applied', result: { confirmation: 'CNF-1', status: 'accepted' } });
    const stray = deadLetter(h.topics, { callId: 'c-stray', replyTopic: 'someone.elses.topic' });
    await h.recordUnresolved(stray.idempotencyKey!, FILING_ARGS);
    await h.publishDeadLetter(stray);
    await h.triaged({ callId: 'c-stray' });
    await h.clock.advance(1_000);
    // Resolved and settled, but no result is sent to an address outside the allowed reply topics.
    expect((await caseOf('c-stray')).state).toBe('resolved_succeeded');
    expect((await h.claimAgain('c-stray')).kind).toBe('completed');
    await eventually(() => h.audits.find((a) => a.callId === 'c-stray'));
    expect(h.results).toHaveLength(0);
  });

  it('lets only one of two reconcilers resolve a case both see due', async () => {
    h = await createHarness();
    h.script.push(
      { state: 'applied', result: { confirmation: 'CNF-5', status: 'accepted' } },
      { state: 'applied', result: { confirmation: 'CNF-5', status: 'accepted' } },
    );
    const letter = deadLetter(h.topics, { callId: 'c-race' });
    await h.recordUnresolved(letter.idempotencyKey!, FILING_ARGS);
    // Two more reconcilers on the same stores, never started: each visits due cases by hand.
    const [first, second] = ['reconciler-2', 'reconciler-3'].map((reconcilerId) =>
      createReconciler({
        subscriber: h.bus,
        publisher: h.bus,
        codec: h.codec,
        topics: h.topics,
        cases: h.cases,
        idempotency: h.idempotency,
        tools: h.registry,
        clock: h.clock,
        logger: silentLogger,
        reconcilerId,
        groupId: h.groupId,
        replyTopics: { [h.topics.results]: 4 },
        resultTtlMs: 86_400_000,
      }),
    ) as [Reconciler, Reconciler];
    await h.reconciler.start();
    await h.publishDeadLetter(letter);
    await h.triaged({ callId: 'c-race' });
    // The harness's reconciler (and its due loop) stops; the case is due once the clock moves.
    await h.reconciler.stop();
    await h.clock.advance(1_000);
    const [a, b] = await Promise.all([first.checkDue(), second.checkDue()]);
    const kinds = [...a, ...b].map((s) => s.kind).sort();
    expect(kinds).toEqual(['resolved', 'skipped']);
    await eventually(() => h.results[0]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(h.results).toHaveLength(1);
    expect(h.audits).toHaveLength(1);
    expect(h.checks).toHaveLength(2);
  });
});

/** The dead-letter partition the harness's raw message (key 'raw') landed on. */
function partitionOfRaw(harness: Harness): number {
  return [0, 1].find((p) => harness.bus.endOffset(harness.topics.dlq, p) === '1')!;
}
