import { describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from '../../../libs/adapters/memory/index.js';
import { callerError } from '../../../libs/core/tool-failure.js';
import type { Clock } from '../../../libs/core/clock.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { argumentsFingerprint, idempotencyKey } from '../../../libs/core/idempotency-key.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { claimLeaseMs } from '../../../libs/guards/idempotency.js';
import type { StatusCheckAnswer, ToolInvocation } from '../../../libs/registry/tool-definition.js';
import { hang, http, makeDeps, makeState, makeTool, runTail } from './stage-harness.js';

/**
 * The status-check protocol the execute stage runs for a tool that declares `check` and `apply`:
 * check first, fence, apply once, and after an unknown outcome check again until the answer is
 * decisive — "not applied" trusted only `settleMs` after the send ended. Every test counts the
 * applies: the negative cases prove the effect was not sent.
 */

const ARGS = { orderId: 'O-5512', amount: 49.99 };
const KEY = idempotencyKey({ tenant: 't1', taskId: 'task-1', step: 0, index: 0 }, 'issue_refund', ARGS);
const ok = () => Promise.resolve({ orderId: 'O-5512', status: 'refunded' });

/** An apply that records each invocation, then does what `script` says (its last step repeats). */
function applying(script: ((inv: ToolInvocation) => Promise<unknown>)[]) {
  const seen: ToolInvocation[] = [];
  const execute = (_args: unknown, inv: ToolInvocation) => {
    seen.push(inv);
    return script[Math.min(seen.length - 1, script.length - 1)]!(inv);
  };
  return { seen, execute };
}

/** A check answering from `answers` in turn (the last repeats); records `inv.attempt` of each. */
function checking(answers: (StatusCheckAnswer['state'] | 'throw' | 'refuse')[]) {
  const attempts: number[] = [];
  const check = (_a: unknown, inv: ToolInvocation): Promise<StatusCheckAnswer> => {
    attempts.push(inv.attempt);
    const answer = answers[Math.min(attempts.length - 1, answers.length - 1)]!;
    if (answer === 'throw') return Promise.reject(new Error('status endpoint down'));
    if (answer === 'refuse') return Promise.reject(callerError('The key already holds a different effect.'));
    return Promise.resolve(
      answer === 'applied'
        ? { state: answer, result: { orderId: 'O-5512', status: 'done', pan: '4111' } }
        : { state: answer },
    );
  };
  return { attempts, check };
}

/** Deps holding an abandoned claim of "executor-dead" whose lease ran out, as a crash mid-call leaves. */
async function abandoned(clock: Clock = systemClock) {
  const storeClock = new ManualClock(Date.now());
  const store = new MemoryIdempotencyStore(storeClock);
  await store.claim(KEY, argumentsFingerprint(ARGS), 'executor-dead', 10);
  await storeClock.advance(20);
  return makeDeps({ store, clock });
}

/**
 * A clock whose time can jump without running any timer: what a process sees right after it was
 * paused (SIGSTOP, a VM freeze) — the time has passed, the timers that are overdue have not run yet.
 */
class PausedClock extends ManualClock {
  #skipped = 0;
  override now(): number {
    return super.now() + this.#skipped;
  }
  jump(ms: number): void {
    this.#skipped += ms;
  }
}

const claimOf = async (deps: ReturnType<typeof makeDeps>) =>
  (await deps.store.claim(KEY, argumentsFingerprint(ARGS), 'b', 1000)).kind;

describe('status-check protocol: the check comes first', () => {
  it('not applied: fenced, applied once, SUCCESS; the check saw no send before it', async () => {
    const { seen, execute } = applying([ok]);
    const { attempts, check } = checking(['not-applied']);
    const ran = await runTail(
      makeState(makeTool({ execute, retrySafety: { kind: 'status-check', check } })),
      makeDeps(),
    );
    expect(ran.endedAt).toBe('all');
    expect(seen).toHaveLength(1);
    expect(attempts).toEqual([0]);
  });

  it('applied: SUCCESS with the checked result, redacted; nothing sent', async () => {
    const { seen, execute } = applying([ok]);
    const { check } = checking(['applied']);
    const deps = makeDeps();
    const ran = await runTail(
      makeState(makeTool({ execute, retrySafety: { kind: 'status-check', check } })),
      deps,
    );
    expect(ran.endedAt).toBe('all');
    expect(ran.state.output).toEqual({ orderId: 'O-5512', status: 'done' });
    expect(ran.passReasons.execute).toBe(
      'the effect was already applied (confirmed by a status check before sending); not run again',
    );
    expect(seen).toHaveLength(0);
    expect(await claimOf(deps)).toBe('completed');
  });

  it('unknown, or a failing check: refused SERVER_ERROR "nothing was sent", claim released, nothing sent', async () => {
    for (const answer of ['unknown', 'throw'] as const) {
      const { seen, execute } = applying([ok]);
      const { check } = checking([answer]);
      const deps = makeDeps();
      const tool = makeTool({ execute, timeoutMs: 20, retrySafety: { kind: 'status-check', check } });
      const ran = await runTail(makeState(tool), deps);
      expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'SERVER_ERROR', retryable: true } });
      expect((ran.end as { error: Error }).error.message).toMatch(/nothing was sent/);
      expect(seen).toHaveLength(0);
      expect(await claimOf(deps)).toBe('claimed');
    }
  });

  it('a deadline already passed: TIMEOUT "it did not run", nothing sent', async () => {
    const { seen, execute } = applying([ok]);
    const { check } = checking(['not-applied']);
    const tool = makeTool({ execute, timeoutMs: 20, retrySafety: { kind: 'status-check', check } });
    const ran = await runTail(makeState(tool, { ctx: { deadlineMs: Date.now() - 1 } }), makeDeps());
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'TIMEOUT', retryable: true } });
    expect((ran.end as { error: Error }).error.message).toMatch(/did not run/);
    expect(seen).toHaveLength(0);
  });

  it('a caller that already gave up: TIMEOUT "cancelled before it was sent", nothing sent', async () => {
    const { seen, execute } = applying([ok]);
    const { check } = checking(['not-applied']);
    const controller = new AbortController();
    controller.abort();
    const tool = makeTool({ execute, timeoutMs: 20, retrySafety: { kind: 'status-check', check } });
    const ran = await runTail(makeState(tool, { signal: controller.signal }), makeDeps());
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'TIMEOUT', retryable: true } });
    expect((ran.end as { error: Error }).error.message).toBe(
      'The call was cancelled before it was sent; it did not run.',
    );
    expect(seen).toHaveLength(0);
  });

  it('after a definite failure the backoff is waited out before the next send', async () => {
    const clock = new ManualClock(1_000_000);
    const { seen, execute } = applying([() => Promise.reject(http(503)), ok]);
    const { check } = checking(['not-applied']);
    const tool = makeTool({
      execute,
      timeoutMs: 5_000,
      retry: { maxAttempts: 2, baseDelayMs: 400, maxDelayMs: 1_000 },
      retrySafety: { kind: 'status-check', check },
    });
    const done = runTail(makeState(tool), makeDeps({ clock }));
    while (seen.length < 1) await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    // Full jitter with random 0.5: floor(0.5 × 401) = 200 ms.
    await clock.advance(199);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(seen).toHaveLength(1);
    await clock.advance(1);
    const ran = await done;
    expect(ran.endedAt).toBe('all');
    expect(seen.map((inv) => inv.attempt)).toEqual([1, 2]);
  });

  it('a check that refuses (a caller error) refuses the call: nothing sent', async () => {
    const { seen, execute } = applying([ok]);
    const { check } = checking(['refuse']);
    const ran = await runTail(
      makeState(makeTool({ execute, retrySafety: { kind: 'status-check', check } })),
      makeDeps(),
    );
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'CALLER_ERROR' } });
    expect(seen).toHaveLength(0);
  });
});

describe('status-check protocol: after a send whose outcome is unknown', () => {
  it('applied: SUCCESS with what the check found, not sent again', async () => {
    const { seen, execute } = applying([hang]);
    const { attempts, check } = checking(['not-applied', 'applied']);
    const ran = await runTail(
      makeState(makeTool({ execute, timeoutMs: 20, retrySafety: { kind: 'status-check', check } })),
      makeDeps(),
    );
    expect(ran.endedAt).toBe('all');
    expect(ran.passReasons.execute).toBe(
      'the effect was already applied (confirmed by a status check after an unanswered send); not run again',
    );
    expect(seen).toHaveLength(1);
    expect(attempts).toEqual([0, 1]);
  });

  it('decisively not applied: sent once more, fenced again', async () => {
    const { seen, execute } = applying([hang, ok]);
    const { attempts, check } = checking(['not-applied']);
    const tool = makeTool({
      execute,
      timeoutMs: 20,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
      retrySafety: { kind: 'status-check', check },
    });
    const ran = await runTail(makeState(tool), makeDeps());
    expect(ran.endedAt).toBe('all');
    expect(seen.map((inv) => inv.attempt)).toEqual([1, 2]);
    expect(attempts).toEqual([0, 1]);
  });

  it('not applied after the last attempt: the honest failure, claim released', async () => {
    const { seen, execute } = applying([hang]);
    const { check } = checking(['not-applied']);
    const deps = makeDeps();
    const tool = makeTool({
      execute,
      timeoutMs: 20,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
      retrySafety: { kind: 'status-check', check },
    });
    const ran = await runTail(makeState(tool), deps);
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'SERVER_ERROR', retryable: true } });
    const error = (ran.end as { error: Error & { cause?: unknown } }).error;
    expect(error.message).toMatch(
      /its status check confirmed it after the answer was lost\); nothing was done/,
    );
    expect(error.cause).toMatchObject({ code: 'TIMEOUT' });
    expect(seen).toHaveLength(2);
    expect(await claimOf(deps)).toBe('claimed');
  });

  it('still unknown when the checks run out: UNRESOLVED, recorded, not sent again', async () => {
    for (const answer of ['unknown', 'throw', 'refuse'] as const) {
      const { seen, execute } = applying([hang]);
      const { check } = checking(['not-applied', answer]);
      const deps = makeDeps();
      const tool = makeTool({
        execute,
        timeoutMs: 20,
        retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
        retrySafety: { kind: 'status-check', check },
      });
      const ran = await runTail(makeState(tool), deps);
      expect(ran.end).toMatchObject({
        kind: 'finish',
        outcome: 'UNRESOLVED',
        reason: 'outcome unknown after TIMEOUT; will be reconciled',
      });
      expect(seen).toHaveLength(1);
      expect(await claimOf(deps)).toBe('completed');
    }
  });

  it('a definite failure needs no check: a 5xx is retried by policy, then refused and released', async () => {
    const { seen, execute } = applying([() => Promise.reject(http(503))]);
    const { attempts, check } = checking(['not-applied']);
    const deps = makeDeps();
    const ran = await runTail(
      makeState(makeTool({ execute, retrySafety: { kind: 'status-check', check } })),
      deps,
    );
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'SERVER_ERROR' } });
    expect(seen).toHaveLength(3);
    expect(attempts).toEqual([0]);
    expect(await claimOf(deps)).toBe('claimed');
  });

  it('an applied result that breaks the output schema is refused BAD_OUTPUT and recorded', async () => {
    const { execute } = applying([hang]);
    const check = (_a: unknown, inv: ToolInvocation) =>
      Promise.resolve<StatusCheckAnswer>(
        inv.attempt === 0 ? { state: 'not-applied' } : { state: 'applied', result: { orderId: 5 } },
      );
    const deps = makeDeps();
    const tool = makeTool({ execute, timeoutMs: 20, retrySafety: { kind: 'status-check', check } });
    const ran = await runTail(makeState(tool), deps);
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'BAD_OUTPUT', retryable: false } });
    expect(await claimOf(deps)).toBe('completed');
  });
});

describe('status-check protocol: "not applied" is trusted only settleMs after the send ended', () => {
  it('an early not-applied is treated as unknown: no second send until the window has passed', async () => {
    const clock = new ManualClock(1_000_000);
    const { seen, execute } = applying([
      (inv) => Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', inv })),
      ok,
    ]);
    const { attempts, check } = checking(['not-applied']);
    const tool = makeTool({
      execute,
      timeoutMs: 5_000,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
      retrySafety: { kind: 'status-check', check, settleMs: 3_000 },
    });
    const deps = makeDeps({ clock });
    const done = runTail(makeState(tool), deps);
    while (seen.length < 1 || attempts.length < 2) await new Promise((r) => setImmediate(r));
    // The check right after the lost answer said not-applied; it is not believed yet.
    await clock.advance(2_900);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(seen).toHaveLength(1);
    await clock.advance(200);
    const ran = await done;
    expect(ran.endedAt).toBe('all');
    expect(seen).toHaveLength(2);
    // The check that was believed started at or after the end of the window.
    expect(attempts.length).toBeGreaterThanOrEqual(3);
  });

  it('after a take-over the window counts from the take-over: the previous owner may still be sending', async () => {
    const clock = new ManualClock(Date.now());
    const deps = await abandoned(clock);
    const { seen, execute } = applying([ok]);
    const { attempts, check } = checking(['not-applied']);
    const tool = makeTool({ execute, retrySafety: { kind: 'status-check', check, settleMs: 1_000 } });
    const done = runTail(makeState(tool), deps);
    while (attempts.length < 1) await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(seen).toHaveLength(0);
    await clock.advance(1_000);
    const ran = await done;
    expect(ran.state.takenOver).toBe(true);
    expect(ran.endedAt).toBe('all');
    expect(seen).toHaveLength(1);
  });

  it('after a take-over: applied → SUCCESS, nothing sent; unknown → UNRESOLVED, nothing sent', async () => {
    const applied = applying([ok]);
    const found = await runTail(
      makeState(
        makeTool({
          execute: applied.execute,
          retrySafety: { kind: 'status-check', check: checking(['applied']).check },
        }),
      ),
      await abandoned(),
    );
    expect(found.endedAt).toBe('all');
    expect(applied.seen).toHaveLength(0);

    const unknown = applying([ok]);
    const deps = await abandoned();
    const lost = await runTail(
      makeState(
        makeTool({
          execute: unknown.execute,
          timeoutMs: 20,
          retrySafety: { kind: 'status-check', check: checking(['unknown']).check },
        }),
      ),
      deps,
    );
    expect(lost.end).toMatchObject({
      kind: 'finish',
      outcome: 'UNRESOLVED',
      reason: 'a previous executor stopped mid-call and the status check could not tell',
    });
    expect(unknown.seen).toHaveLength(0);
  });
});

describe('status-check protocol: the fence', () => {
  it('a lease that ran out while the check was running: nothing is sent, UNRESOLVED', async () => {
    const clock = new PausedClock(1_000_000);
    const { seen, execute } = applying([ok]);
    let release!: () => void;
    const check = () =>
      new Promise<StatusCheckAnswer>((resolve) => {
        release = () => resolve({ state: 'not-applied' });
      });
    const tool = makeTool({ execute, timeoutMs: 60_000, retrySafety: { kind: 'status-check', check } });
    const deps = makeDeps({ clock });
    const done = runTail(makeState(tool), deps);
    while (release === undefined) await new Promise((r) => setImmediate(r));
    // The process was paused past its lease (the check's own timeout is longer still).
    clock.jump(claimLeaseMs(tool, deps.settings) + 1);
    release();
    const ran = await done;
    expect(ran.end).toMatchObject({
      kind: 'finish',
      outcome: 'UNRESOLVED',
      reason: "this executor's lease ran out before the effect was sent; nothing more is sent",
    });
    expect(seen).toHaveLength(0);
  });

  it('apply is told an effect deadline no later than the lease, and assertLive fails past the lease', async () => {
    const clock = new PausedClock(1_000_000);
    let failedAfterLease: unknown;
    const { seen, execute } = applying([
      async (inv) => {
        clock.jump(claimLeaseMs(tool, deps.settings) + 1);
        try {
          inv.assertLive();
        } catch (err) {
          failedAfterLease = err;
        }
        return { orderId: 'O-5512', status: 'refunded' };
      },
    ]);
    const { check } = checking(['not-applied']);
    const tool = makeTool({
      execute,
      timeoutMs: 10 * 60_000,
      retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      retrySafety: { kind: 'status-check', check },
    });
    const deps = makeDeps({ clock });
    const startedAt = clock.now();
    await runTail(makeState(tool), deps);
    const deadline = seen[0]!.effectDeadlineMs!;
    expect(deadline).toBeLessThanOrEqual(startedAt + claimLeaseMs(tool, deps.settings));
    expect(deadline).toBeGreaterThan(startedAt);
    expect(failedAfterLease).toMatchObject({ code: 'TIMEOUT' });
  });

  it('a "not applied" answer from an executor whose lease ran out becomes UNRESOLVED: the new owner may apply it', async () => {
    const clock = new PausedClock(1_000_000);
    const deps = makeDeps({ clock });
    const { seen, execute } = applying([
      async () => {
        // Paused past the lease while the request was out; another executor takes the call over.
        clock.jump(claimLeaseMs(tool, deps.settings) + 1);
        expect((await deps.store.claim(KEY, argumentsFingerprint(ARGS), 'executor-b', 60_000)).kind).toBe(
          'taken-over',
        );
        throw callerError('No such order.');
      },
    ]);
    const tool = makeTool({
      execute,
      timeoutMs: 10 * 60_000,
      retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      retrySafety: { kind: 'status-check', check: checking(['not-applied']).check },
    });
    const ran = await runTail(makeState(tool), deps);
    expect(seen).toHaveLength(1);
    expect(ran.end).toMatchObject({ kind: 'finish', outcome: 'UNRESOLVED' });
    expect((ran.end as { reason: string }).reason).toMatch(/lease ran out before it could record/);
  });
});
