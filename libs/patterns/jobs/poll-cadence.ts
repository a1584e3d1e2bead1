/** The shortest interval a model is told to wait between polls of one job. */
export const MIN_POLL_INTERVAL_MS = 5_000;

/** The longest: a job nearly done is looked at again soon even if its estimate says otherwise. */
export const MAX_POLL_INTERVAL_MS = 15_000;

/**
 * When to poll again, given the estimated time left: that time, but at least
 * {@link MIN_POLL_INTERVAL_MS} (so a model never busy-polls) and at most
 * {@link MAX_POLL_INTERVAL_MS} (so an estimate that was too pessimistic costs little), in whole
 * seconds. Pure.
 */
export function pollAfterMs(remainingMs: number): number {
  const wanted = Number.isFinite(remainingMs) ? remainingMs : MAX_POLL_INTERVAL_MS;
  const clamped = Math.min(MAX_POLL_INTERVAL_MS, Math.max(MIN_POLL_INTERVAL_MS, wanted));
  return Math.ceil(clamped / 1000) * 1000;
}
