import type { FactContribution, FactSeriesQuery } from '../../ports/fact-store.js';
import { checkDurationMs, checkKey } from './argument-checks.js';

/**
 * The argument checks of the FactStore adapters (memory, Redis), the same in each, and the window
 * arithmetic they share, so every adapter counts and drops exactly the same contributions. A whole
 * batch is checked before anything is read or written: one bad element refuses the batch.
 */

/** A {@link FactSeriesQuery} that passed the checks, with its window's start. */
export interface CheckedFactQuery {
  readonly key: string;
  /** Contributions with `atMs` strictly greater than this count: `nowMs - windowMs`. */
  readonly afterMs: number;
  /** A call whose contribution is left out. */
  readonly exceptCallId?: string;
}

/** A {@link FactContribution} that passed the checks, with its window rounded up to a whole millisecond. */
export interface CheckedFactContribution extends FactContribution {
  /** Contributions of the series with `atMs` at or below this may be dropped: `atMs - windowMs`. */
  readonly dropUpToMs: number;
}

/**
 * Checks `sum`'s arguments: every key non-empty, every window finite and > 0 (rounded up to a whole
 * millisecond), `nowMs` finite. Returns the queries in order; throws RangeError.
 */
export function checkFactQueries(queries: readonly FactSeriesQuery[], nowMs: number): CheckedFactQuery[] {
  checkInstantMs('nowMs', nowMs);
  return queries.map((query) => {
    checkKey('key', query.key);
    if (query.exceptCallId !== undefined) checkKey('exceptCallId', query.exceptCallId);
    return {
      key: query.key,
      afterMs: nowMs - checkDurationMs('windowMs', query.windowMs),
      ...(query.exceptCallId === undefined ? {} : { exceptCallId: query.exceptCallId }),
    };
  });
}

/**
 * Checks `record`'s arguments: key and callId non-empty, units a safe integer, `atMs` finite, the window
 * finite and > 0 (rounded up to a whole millisecond). Returns the contributions in order; throws
 * RangeError.
 */
export function checkFactContributions(
  contributions: readonly FactContribution[],
): CheckedFactContribution[] {
  return contributions.map(({ key, callId, units, atMs, windowMs }) => {
    checkKey('key', key);
    checkKey('callId', callId);
    if (!Number.isSafeInteger(units)) {
      throw new RangeError(`units must be a safe integer, got ${units}`);
    }
    checkInstantMs('atMs', atMs);
    const window = checkDurationMs('windowMs', windowMs);
    return { key, callId, units, atMs, windowMs: window, dropUpToMs: atMs - window };
  });
}

/** Throws RangeError unless `ms` is a finite number (an instant, in epoch milliseconds). */
function checkInstantMs(name: string, ms: number): void {
  if (!Number.isFinite(ms))
    throw new RangeError(`${name} must be a finite number of milliseconds, got ${ms}`);
}
