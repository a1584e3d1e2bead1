import { backoffDelay, type BackoffPolicy } from '../../libs/core/backoff.js';
import type { Clock } from '../../libs/ports/clock.js';
import type { Logger } from '../../libs/ports/logger.js';

// Re-exported for callers that take their pacing from here (the ops CLI).
export { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from '../../libs/core/backoff.js';

export interface RetryOptions {
  readonly clock: Clock;
  readonly backoff: BackoffPolicy;
  readonly logger: Logger;
  /** Stops retrying (the step is then reported as not done). */
  readonly signal: AbortSignal;
  /** Errors that retrying cannot fix: thrown at once instead of retried. */
  readonly isFatal?: (err: unknown) => boolean;
  /** Called before each wait, e.g. a consumer heartbeat. */
  readonly onRetry?: () => void;
}

/**
 * Runs `step` until it resolves, waiting with backoff between failures. Resolves `{ value }`, or
 * undefined when `signal` aborted first (before a try, or during a wait). Rejects only with an error
 * `isFatal` accepts. Each failure is logged at warn with `what` and `fields`.
 */
export async function retryUntil<T>(
  what: string,
  step: () => Promise<T>,
  opts: RetryOptions,
  fields: object = {},
): Promise<{ value: T } | undefined> {
  for (let retry = 1; ; retry++) {
    if (opts.signal.aborted) return undefined;
    try {
      return { value: await step() };
    } catch (err) {
      if (opts.isFatal?.(err)) throw err;
      const delayMs = backoffDelay(opts.backoff, retry);
      opts.logger.warn(
        { ...fields, err: err instanceof Error ? err.message : String(err), retry, delayMs },
        `${what} failed; retrying`,
      );
      opts.onRetry?.();
      try {
        await opts.clock.sleep(delayMs, opts.signal);
      } catch {
        return undefined;
      }
    }
  }
}
