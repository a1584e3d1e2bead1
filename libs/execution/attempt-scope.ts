import { ToolgateError } from '../core/errors.js';
import { systemClock } from '../core/system-clock.js';
import type { Clock } from '../core/clock.js';

/** Why an attempt's signal fired. */
export type AbortCause = 'timeout' | 'deadline' | 'caller';

/** The lifetime of one attempt: a signal that fires on the first of its limits, and its clean-up. */
export interface AttemptScope {
  /** Aborts at the tool timeout, at the call's deadline, or when the caller's signal aborts. */
  readonly signal: AbortSignal;
  /** What fired the signal, or undefined while it has not fired. */
  cause(): AbortCause | undefined;
  /** When the attempt's time limit ends (epoch ms by the scope's clock); Infinity without one. */
  readonly endsAtMs: number;
  /**
   * Throws (the signal's reason) when the signal has fired, or when the attempt's time limit has
   * passed by the clock even though its timer has not run yet — it then fires the signal first. A
   * process that was paused (SIGSTOP, a VM freeze, a long GC) resumes with every timer overdue, and
   * code whose own timer is due first runs before the limit's timer; this check is what such code
   * can rely on right before an effect.
   */
  assertLive(): void;
  /** Stops the timer and detaches from the caller's signal. Call it once the attempt has settled. */
  dispose(): void;
}

/**
 * Combines the caller's signal, a per-attempt timeout and the absolute call deadline into one signal
 * (the same composition as `AbortSignal.any`, but timed by the injected clock so tests can drive it,
 * and detaching from the long-lived caller signal on dispose so it does not gather listeners).
 *
 * The abort reason is a ToolgateError TIMEOUT for the timeout and the deadline, and the caller's own
 * reason when the caller aborted. A deadline already passed aborts at once.
 */
export function attemptScope(
  parent: AbortSignal,
  timeoutMs: number,
  deadlineMs: number | undefined,
  clock: Clock,
): AttemptScope {
  const controller = new AbortController();
  let cause: AbortCause | undefined;
  let cancelTimer: (() => void) | undefined;

  const fire = (why: AbortCause, reason: unknown): void => {
    if (controller.signal.aborted) return;
    cause = why;
    controller.abort(reason);
  };
  const onParentAbort = (): void => fire('caller', parent.reason);

  const startedAtMs = clock.now();
  const remainingToDeadline = deadlineMs === undefined ? Infinity : deadlineMs - startedAtMs;
  const budget = Math.min(timeoutMs > 0 ? timeoutMs : 0, remainingToDeadline);
  const limitedBy: AbortCause = remainingToDeadline < timeoutMs ? 'deadline' : 'timeout';
  const endsAtMs = startedAtMs + budget;

  if (parent.aborted) {
    onParentAbort();
  } else {
    parent.addEventListener('abort', onParentAbort, { once: true });
    if (budget <= 0) {
      fire(limitedBy, timeoutError(limitedBy));
    } else if (budget <= MAX_TIMER_MS) {
      cancelTimer = startTimer(clock, budget, () => fire(limitedBy, timeoutError(limitedBy)));
    }
  }

  return {
    signal: controller.signal,
    cause: () => cause,
    endsAtMs,
    assertLive() {
      if (!controller.signal.aborted && clock.now() >= endsAtMs) fire(limitedBy, timeoutError(limitedBy));
      if (controller.signal.aborted) throw controller.signal.reason as Error;
    },
    dispose() {
      parent.removeEventListener('abort', onParentAbort);
      cancelTimer?.();
      cancelTimer = undefined;
    },
  };
}

/** Reason given to a disposed timer's sleep; allocated once because building an error per call is costly. */
const DISPOSED = new Error('attempt settled before its time limit');

/**
 * Calls `onFire` after `ms` of `clock` time; the returned function cancels it. A clock that sleeps
 * with the system clock's timer is real time, so a plain timer is used: the same timing without an
 * AbortController per attempt, whose abort (event dispatch, ~5 µs) would otherwise be paid on every
 * successful call. Any other clock (a manual one in tests) is driven through its own `sleep`.
 */
function startTimer(clock: Clock, ms: number, onFire: () => void): () => void {
  if (clock.sleep === systemClock.sleep) {
    const handle = setTimeout(onFire, ms);
    return () => clearTimeout(handle);
  }
  const cancel = new AbortController();
  clock.sleep(ms, cancel.signal).then(onFire, () => undefined);
  return () => cancel.abort(DISPOSED);
}

/**
 * Settles with `work`, or rejects with `signal.reason` as soon as the signal aborts, whichever comes
 * first. Needed because a tool that ignores its signal must not hold the pipeline past its timeout;
 * the abandoned promise's later rejection is swallowed.
 */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      work.catch(() => undefined);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * Node fires timers longer than 2^31-1 ms after 1 ms instead; a budget that long (an unbounded
 * timeout, a deadline weeks away) is no limit in practice, so no timer is set for it.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

function timeoutError(why: AbortCause): ToolgateError {
  return new ToolgateError(
    'TIMEOUT',
    why === 'deadline'
      ? "The call's deadline passed before the downstream service answered; its outcome is unknown."
      : 'The downstream service did not answer in time; its outcome is unknown.',
  );
}
