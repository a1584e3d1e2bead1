import type { ReconciliationCase } from '../ports/case-store.js';

/**
 * The default waits before each status check of a round, in ms: 1, 2, 4, 8 and 16 s (31 s in
 * all). A round is the checks made after a case opens, or after it is redriven (by a person, or by
 * the reconciler itself: an automatic redrive).
 */
export const DEFAULT_CHECK_SCHEDULE_MS: readonly number[] = [1_000, 2_000, 4_000, 8_000, 16_000];

/**
 * Returns the schedule unchanged when it is usable: at least one wait, each a whole number of ms > 0
 * (a zero wait would make checks of two rounds indistinguishable in time). Throws RangeError otherwise.
 */
export function checkSchedule(schedule: readonly number[]): readonly number[] {
  if (schedule.length === 0) throw new RangeError('the status-check schedule needs at least one wait');
  for (const ms of schedule) {
    if (!Number.isSafeInteger(ms) || ms <= 0) {
      throw new RangeError(`every status-check wait must be a whole number of ms > 0, got ${ms}`);
    }
  }
  return schedule;
}

/**
 * When the case's current round began: when it was last redriven — a person moved it back to
 * `open`, or the reconciler re-submitted the call itself (an `autoRedrive` move) — or undefined
 * when it has been open since its dead letter arrived. Pure.
 */
export function redrivenAtMs(c: Pick<ReconciliationCase, 'history'>): number | undefined {
  for (let i = c.history.length - 1; i >= 0; i--) {
    const entry = c.history[i]!;
    if (entry.to === 'open' && (entry.from !== 'open' || entry.autoRedrive === true)) return entry.atMs;
  }
  return undefined;
}

/** How often the reconciler has redriven the case by itself (its `autoRedrive` moves). Pure. */
export function automaticRedrives(c: Pick<ReconciliationCase, 'history'>): number {
  return c.history.filter((entry) => entry.autoRedrive === true).length;
}

/**
 * Status checks made in the current round. Checks of an earlier round all happened before the
 * redrive, and the first check of a round comes at least one wait (> 0 ms) after it. Pure.
 */
export function checksThisRound(c: Pick<ReconciliationCase, 'history' | 'statusChecks'>): number {
  const since = redrivenAtMs(c);
  return since === undefined
    ? c.statusChecks.length
    : c.statusChecks.filter((check) => check.atMs > since).length;
}

/**
 * The wait before the next check after `done` checks of this round, or undefined when the round's
 * checks are used up (the case goes to a person). Pure.
 */
export function nextWaitMs(schedule: readonly number[], done: number): number | undefined {
  return done < schedule.length ? schedule[done] : undefined;
}
