import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ReconciliationCase } from '../../../libs/ports/case-store.js';
import { callEndedAtMs, notAppliedTrust, settleMsOf } from '../../../libs/reconcile/status-check.js';
import type { StatusCheckAnswer } from '../../../libs/registry/tool-definition.js';
import { closeAfterEach } from '../../helpers/close-after-each.js';
import {
  createHarness,
  deadLetter,
  eventually,
  FILING_ARGS,
  neverRuns,
  reconciledTool,
  T0,
  UNRESOLVED_RECORD,
  type Harness,
} from './harness.js';

/**
 * A status check's "not-applied" is acted on by the reconciler only when the check STARTED at least
 * the tool's settle time (`retrySafety.settleMs`) after the call ended; an earlier one counts as
 * "unknown" and the case stays to be checked on the schedule. The harness's clock is manual: the
 * case opens at T0 (the call's UNRESOLVED dead letter is from T0 - 1 s), and with the default
 * schedule the checks come 1, 3, 7, 15 and 31 s after.
 */
let h: Harness;
closeAfterEach(() => h);

/** What `file_return`'s check was asked, when; and what it answers next (unknown once out). */
let started: number[];
let answers: Array<StatusCheckAnswer | { readonly after: number; readonly answer: StatusCheckAnswer }>;

/**
 * Registers `file_return`: the filing call's schema, a status check scripted by `answers` (an
 * entry with `after` answers only that many ms later, by the harness's clock) and `settleMs`.
 */
function registerFileReturn(settleMs: number | undefined): void {
  const retrySafety = {
    kind: 'status-check' as const,
    check: async (): Promise<StatusCheckAnswer> => {
      started.push(h.clock.now());
      const next = answers.shift() ?? { state: 'unknown' };
      if ('after' in next) {
        await h.clock.sleep(next.after);
        return next.answer;
      }
      return next;
    },
    apply: neverRuns,
    ...(settleMs === undefined ? {} : { settleMs }),
  };
  h.registry.register(
    reconciledTool({
      name: 'file_return',
      description: 'File a tax return.',
      input: z.object({ taxpayerId: z.string(), year: z.number().int() }),
      output: z.object({ confirmation: z.string(), status: z.string() }),
      owner: 'filings-team',
      timeoutMs: 30_000,
      retrySafety,
    }),
  );
}

async function openCase(callId: string, settleMs: number | undefined): Promise<void> {
  h = await createHarness();
  started = [];
  answers = [];
  registerFileReturn(settleMs);
  const letter = deadLetter(h.topics, { callId, tool: 'file_return' });
  await h.recordUnresolved(letter.idempotencyKey!, FILING_ARGS);
  await h.reconciler.start();
  await h.publishDeadLetter(letter);
  await h.triaged({ callId });
}

async function caseOf(callId: string): Promise<ReconciliationCase> {
  const c = await h.cases.get({ callId });
  if (c === undefined) throw new Error(`no case for ${callId}`);
  return c;
}

const NOT_APPLIED: StatusCheckAnswer = { state: 'not-applied' };

describe('a status check\'s "not-applied" before the settle time', () => {
  it('counts as unknown until a check starts settleMs after the call ended; then the case is resolved as failed', async () => {
    await openCase('c-settle', 10_000);
    answers.push(NOT_APPLIED, NOT_APPLIED, NOT_APPLIED, NOT_APPLIED);

    await h.clock.advance(7_000);
    let c = await caseOf('c-settle');
    expect(started.map((t) => t - T0)).toEqual([1_000, 3_000, 7_000]);
    expect(c.state).toBe('open');
    expect(c.nextCheckAtMs).toBe(T0 + 15_000);
    // Recorded as unknown, with why, and nothing settled, answered or audited.
    expect(c.statusChecks.map((s) => s.answer)).toEqual([
      { state: 'unknown' },
      { state: 'unknown' },
      { state: 'unknown' },
    ]);
    expect(c.history.at(-1)!.note).toBe(
      "status check 3 of 5: answered not-applied 7000 ms after the call ended, before file_return@1.0.0's settle time of 10000 ms: counted as unknown; next check in 8000 ms",
    );
    expect(await h.claimAgain('c-settle')).toEqual({ kind: 'completed', stored: UNRESOLVED_RECORD });
    expect(h.results).toHaveLength(0);
    expect(h.audits).toHaveLength(0);

    // 15 s after the call ended: past the settle time, so "not-applied" is acted on.
    await h.clock.advance(8_000);
    c = await caseOf('c-settle');
    expect(started.map((t) => t - T0)).toEqual([1_000, 3_000, 7_000, 15_000]);
    expect(c.state).toBe('resolved_failed');
    expect(c.statusChecks.at(-1)).toEqual({ atMs: T0 + 15_000, answer: NOT_APPLIED });
    expect(c.resolution!.note).toBe('status check 4 of 5 answered not-applied');
    expect(await h.claimAgain('c-settle')).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'EXECUTION_ERROR', result: { code: 'TIMEOUT' } },
    });
    await eventually(() => (h.results.length === 1 && h.audits.length === 1) || undefined);
    expect(h.results[0]!.event).toMatchObject({ outcome: 'EXECUTION_ERROR', source: 'reconciler' });
  });

  it('is judged by when the check STARTED: one that started early and answered late is still unknown', async () => {
    await openCase('c-started', 3_000);
    // Starts 1 s after the call ended and answers 5 s later, 6 s after: past 3 s, yet too early.
    answers.push({ after: 5_000, answer: NOT_APPLIED }, NOT_APPLIED);

    await h.clock.advance(6_000);
    let c = await caseOf('c-started');
    expect(started.map((t) => t - T0)).toEqual([1_000]);
    expect(c.state).toBe('open');
    expect(c.statusChecks).toEqual([{ atMs: T0 + 6_000, answer: { state: 'unknown' } }]);
    expect(c.history.at(-1)!.note).toMatch(
      /^status check 1 of 5: answered not-applied 1000 ms after the call ended/,
    );

    // The next check starts 8 s after: trusted.
    await h.clock.advance(2_000);
    c = await caseOf('c-started');
    expect(started.map((t) => t - T0)).toEqual([1_000, 8_000]);
    expect(c.state).toBe('resolved_failed');
  });

  it('a check that starts exactly settleMs after the call ended is trusted', async () => {
    await openCase('c-boundary', 1_000);
    answers.push(NOT_APPLIED);
    await h.clock.advance(1_000);
    const c = await caseOf('c-boundary');
    expect(c.state).toBe('resolved_failed');
    expect(c.statusChecks).toEqual([{ atMs: T0 + 1_000, answer: NOT_APPLIED }]);
  });

  it('with no settle time the check is authoritative: its first "not-applied" resolves the case', async () => {
    await openCase('c-no-settle', undefined);
    answers.push(NOT_APPLIED);
    await h.clock.advance(1_000);
    expect((await caseOf('c-no-settle')).state).toBe('resolved_failed');
  });

  it('"not-applied" every time, all before the settle time: needs_manual when the schedule runs out, never failed', async () => {
    await openCase('c-never', 60_000);
    answers.push(NOT_APPLIED, NOT_APPLIED, NOT_APPLIED, NOT_APPLIED, NOT_APPLIED);
    await h.clock.advance(40_000);
    const c = await caseOf('c-never');
    expect(started.map((t) => t - T0)).toEqual([1_000, 3_000, 7_000, 15_000, 31_000]);
    expect(c.state).toBe('needs_manual');
    expect(c.statusChecks.every((s) => s.answer.state === 'unknown')).toBe(true);
    expect(c.history.at(-1)!.note).toMatch(
      /5 status checks made this round, none conclusive \(last: answered not-applied 31000 ms after/,
    );
    expect(h.results).toHaveLength(0);
  });

  it('"applied" is acted on at once, whatever the settle time', async () => {
    await openCase('c-applied', 60_000);
    answers.push({ state: 'applied', result: { confirmation: 'CNF-1', status: 'accepted' } });
    await h.clock.advance(1_000);
    expect((await caseOf('c-applied')).state).toBe('resolved_succeeded');
  });
});

describe('the settle rule', () => {
  const tool = (settleMs?: unknown) => ({
    retrySafety: {
      kind: 'status-check',
      check: () => Promise.resolve({ state: 'unknown' }),
      apply: neverRuns,
      ...(settleMs === undefined ? {} : { settleMs }),
    } as never,
  });
  const opened = (createdAtMs: number, deadLetteredAtMs?: unknown) => ({
    createdAtMs,
    context: deadLetteredAtMs === undefined ? {} : { deadLetteredAtMs },
  });

  it('reads settleMs defensively: absent, negative or not a number is 0; other kinds have none', () => {
    expect(settleMsOf(tool(2_500))).toBe(2_500);
    for (const bad of [undefined, -1, Number.NaN, Infinity, '1000', null])
      expect(settleMsOf(tool(bad))).toBe(0);
    expect(settleMsOf({ retrySafety: { kind: 'forwards-key' } })).toBe(0);
  });

  it('the call ended at the later of its dead letter and the case opening', () => {
    expect(callEndedAtMs(opened(T0, T0 - 1_000))).toBe(T0);
    expect(callEndedAtMs(opened(T0, T0 + 500))).toBe(T0 + 500);
    expect(callEndedAtMs(opened(T0))).toBe(T0);
    expect(callEndedAtMs(opened(T0, 'yesterday'))).toBe(T0);
  });

  it('trusts "not-applied" from a check started settleMs or more after the end; always without a settle time', () => {
    expect(notAppliedTrust(tool(1_000), opened(T0), T0 + 999)).toEqual({
      trusted: false,
      settleMs: 1_000,
      sinceEndMs: 999,
    });
    expect(notAppliedTrust(tool(1_000), opened(T0), T0 + 1_000).trusted).toBe(true);
    expect(notAppliedTrust(tool(1_000), opened(T0, T0 + 600), T0 + 1_000).trusted).toBe(false);
    // Clocks apart (the dead letter stamped after the check began): the check's own answer stands.
    expect(notAppliedTrust(tool(), opened(T0, T0 + 5_000), T0 + 1_000).trusted).toBe(true);
  });
});
