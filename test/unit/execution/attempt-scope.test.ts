import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { attemptScope, raceAbort } from '../../../libs/execution/attempt-scope.js';

describe('attempt scope', () => {
  it('aborts with TIMEOUT when the tool timeout passes', async () => {
    const clock = new ManualClock(0);
    const scope = attemptScope(new AbortController().signal, 100, undefined, clock);
    await clock.advance(99);
    expect(scope.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(scope.signal.aborted).toBe(true);
    expect(scope.cause()).toBe('timeout');
    expect(scope.signal.reason).toMatchObject({ code: 'TIMEOUT' });
  });

  it('aborts at the call deadline when it comes before the timeout', async () => {
    const clock = new ManualClock(1_000);
    const scope = attemptScope(new AbortController().signal, 5_000, 1_050, clock);
    await clock.advance(50);
    expect(scope.cause()).toBe('deadline');
    expect(scope.signal.reason).toMatchObject({ code: 'TIMEOUT' });
  });

  it('a deadline already passed aborts at once', () => {
    const clock = new ManualClock(2_000);
    const scope = attemptScope(new AbortController().signal, 5_000, 1_000, clock);
    expect(scope.signal.aborted).toBe(true);
    expect(scope.cause()).toBe('deadline');
  });

  it("follows the caller's signal with the caller's reason", () => {
    const parent = new AbortController();
    const scope = attemptScope(parent.signal, 5_000, undefined, new ManualClock(0));
    parent.abort(new Error('shutdown'));
    expect(scope.cause()).toBe('caller');
    expect(scope.signal.reason).toEqual(new Error('shutdown'));
  });

  it('dispose stops the timer and detaches from the caller', async () => {
    const clock = new ManualClock(0);
    const parent = new AbortController();
    const scope = attemptScope(parent.signal, 100, undefined, clock);
    scope.dispose();
    expect(clock.pendingSleepers).toBe(0);
    parent.abort();
    await clock.advance(200);
    expect(scope.signal.aborted).toBe(false);
  });

  it('an unbounded budget sets no timer (Node would fire a huge one after 1 ms)', () => {
    const clock = new ManualClock(0);
    attemptScope(new AbortController().signal, Infinity, undefined, clock);
    attemptScope(new AbortController().signal, 2 ** 40, undefined, clock);
    expect(clock.pendingSleepers).toBe(0);
  });
});

describe('attempt scope: assertLive', () => {
  /** A clock whose time the test sets and whose timers never fire: a process resumed from a pause. */
  function pausedClock(start: number) {
    let t = start;
    return {
      now: () => t,
      sleep: () => new Promise<void>(() => undefined),
      set: (ms: number) => void (t = ms),
    };
  }

  it('passes within the limit and throws TIMEOUT once the clock passed it, before its timer ran', () => {
    const clock = pausedClock(0);
    const scope = attemptScope(new AbortController().signal, 100, undefined, clock);
    clock.set(99);
    expect(() => scope.assertLive()).not.toThrow();
    clock.set(5_000); // the process was paused: its timer is overdue and has not run
    expect(scope.signal.aborted).toBe(false);
    expect(() => scope.assertLive()).toThrow(expect.objectContaining({ code: 'TIMEOUT' }));
    expect(scope.signal.aborted).toBe(true);
    expect(scope.cause()).toBe('timeout');
  });

  it('throws at the call deadline when it comes first, and with the reason of an aborted caller', () => {
    const clock = pausedClock(1_000);
    const scope = attemptScope(new AbortController().signal, 10_000, 1_500, clock);
    clock.set(1_500);
    expect(() => scope.assertLive()).toThrow(expect.objectContaining({ code: 'TIMEOUT' }));
    expect(scope.cause()).toBe('deadline');
    const parent = new AbortController();
    const other = attemptScope(parent.signal, 10_000, undefined, clock);
    parent.abort(new Error('stopping'));
    expect(() => other.assertLive()).toThrow('stopping');
  });
});

describe('raceAbort', () => {
  it('settles with the work when it finishes first', async () => {
    await expect(raceAbort(Promise.resolve(7), new AbortController().signal)).resolves.toBe(7);
    await expect(raceAbort(Promise.reject(new Error('x')), new AbortController().signal)).rejects.toThrow(
      'x',
    );
  });

  it('rejects with the reason as soon as the signal aborts, even if the work never settles', async () => {
    const controller = new AbortController();
    const pending = raceAbort(new Promise(() => undefined), controller.signal);
    controller.abort(new Error('timed out'));
    await expect(pending).rejects.toThrow('timed out');
  });
});
