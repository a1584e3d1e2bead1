import { retryWithBackoff } from '../core/backoff.js';
import { systemClock } from '../core/system-clock.js';
import type { CallState } from '../pipeline/call-state.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { Verdict } from '../pipeline/stage.js';
import { contributionsOf } from '../policy/aggregate-fact.js';
import { effectMayHaveHappened } from './claim-record.js';

/** Tries to record a settled call's contributions this many times before counting them lost. */
const RECORD_ATTEMPTS = 4;
const RECORD_BACKOFF = { baseDelayMs: 50, maxDelayMs: 400 };

/**
 * Adds a call's own amounts to the aggregate facts its rules read (`state.factSeries`), once its
 * effect settled and before its idempotency claim is settled — so the next call on the same
 * resource key, which runs only after this one (and, on another executor, only after the claim
 * settled), is judged with it counted.
 *
 * Recorded when the effect may have happened: SUCCESS, UNRESOLVED (the outcome is unknown, so a
 * limit counts it), or any ending after the effect applied. A call refused, or failed without an
 * effect, adds nothing. Recording is idempotent per call (`FactStore.record`), so a redelivered call
 * that settles again does not count twice.
 *
 * A store failure is retried briefly; if it persists the contribution is lost — the call's answer
 * stands (its effect has happened) and `observer.onFactRecordFailure` is told, so operators see
 * that a limit may have let more through. Never rejects.
 */
export async function recordFacts(state: CallState, deps: PipelineDeps, verdict: Verdict): Promise<void> {
  const series = state.factSeries;
  const store = deps.facts;
  if (series === undefined || series.length === 0 || store === undefined) return;
  if (!effectMayHaveHappened(state, verdict)) return;
  const contributions = contributionsOf(series, deps.clock.now());
  if (contributions.length === 0) return;
  try {
    await retryWithBackoff(() => store.record(contributions), {
      backoff: RECORD_BACKOFF,
      clock: systemClock,
      maxAttempts: RECORD_ATTEMPTS,
    });
  } catch {
    try {
      deps.observer?.onFactRecordFailure?.(state.call.name);
    } catch {
      // An observer never changes the answer.
    }
  }
}
