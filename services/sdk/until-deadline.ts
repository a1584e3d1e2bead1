import type { Clock } from '../../libs/core/clock.js';

/** How waiting for some work ended. */
export type DeadlineRace =
  | { readonly kind: 'done' }
  | { readonly kind: 'late' }
  | { readonly kind: 'failed'; readonly error: unknown };

/**
 * Waits for `work` until the absolute `deadlineMs` (by `clock`) or until `stop` aborts, whichever
 * comes first. `late` covers both the deadline and `stop`. The work is not cancelled: a publish
 * still in flight may complete later, which is why a late turn reports its calls UNRESOLVED rather
 * than failed. Never rejects; the work's rejection is always handled.
 */
export async function untilDeadline(
  clock: Clock,
  work: Promise<unknown>,
  deadlineMs: number,
  stop: AbortSignal,
): Promise<DeadlineRace> {
  const timer = new AbortController();
  const onStop = (): void => timer.abort();
  stop.addEventListener('abort', onStop, { once: true });
  const late = (): DeadlineRace => ({ kind: 'late' });
  try {
    return await Promise.race([
      work.then(
        (): DeadlineRace => ({ kind: 'done' }),
        (error: unknown): DeadlineRace => ({ kind: 'failed', error }),
      ),
      stop.aborted
        ? Promise.resolve(late())
        : clock.sleep(Math.max(0, deadlineMs - clock.now()), timer.signal).then(late, late),
    ]);
  } finally {
    stop.removeEventListener('abort', onStop);
    timer.abort();
  }
}
