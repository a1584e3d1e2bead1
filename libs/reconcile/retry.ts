import { retryWithBackoff, type Backoff } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../ports/logger.js';

export interface RetryOptions {
  readonly clock: Clock;
  readonly backoff: Backoff;
  readonly logger: Logger;
  /** Stops retrying (the step is then reported as not done). */
  readonly signal: AbortSignal;
  /** Errors that retrying cannot fix: thrown at once instead of retried. */
  readonly isFatal?: (err: unknown) => boolean;
  /** Called before each wait, e.g. a consumer heartbeat. */
  readonly onRetry?: () => void;
}

/**
 * Runs `step` until it resolves, waiting with backoff (no jitter) between failures, as
 * `retryWithBackoff` does with a signal. Resolves `{ value }`, or undefined when `signal` aborted
 * first (before a try, or during a wait). Rejects only with an error `isFatal` accepts. Each failure
 * is logged at warn with `what` and `fields` — the reconciler's one shape of retry log line.
 */
export function retryUntil<T>(
  what: string,
  step: () => Promise<T>,
  opts: RetryOptions,
  fields: object = {},
): Promise<{ readonly value: T } | undefined> {
  return retryWithBackoff(step, {
    backoff: opts.backoff,
    clock: opts.clock,
    signal: opts.signal,
    ...(opts.isFatal === undefined ? {} : { isFatal: opts.isFatal }),
    onRetry: ({ err, retry, delayMs }) => {
      opts.logger.warn(
        { ...fields, err: err instanceof Error ? err.message : String(err), retry, delayMs },
        `${what} failed; retrying`,
      );
      opts.onRetry?.();
    },
  });
}
