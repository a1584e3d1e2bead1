import type { Clock } from './clock.js';

/**
 * Backoff and retry, in one shape for every loop that waits between attempts: a tool's retries
 * (`RetryPolicy` is this shape plus `maxAttempts`), a service's start-up steps, and the loops that
 * wait for a store, the broker or the schema registry to come back. Pure: time comes from the
 * caller's clock, randomness from its `random`.
 */

/**
 * How the waits between attempts grow: `baseDelayMs` before the first retry, doubling before each
 * next one, never above `maxDelayMs`. Non-finite or negative numbers count as 0.
 */
export interface Backoff {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** 100 ms doubling to 5 s: quick recovery after a blip, little load on a dependency that is down. */
export const DEFAULT_BACKOFF: Backoff = { baseDelayMs: 100, maxDelayMs: 5_000 };

/** A source of uniform numbers in [0, 1), like `Math.random`. Injected so tests can pin the jitter. */
export type RandomSource = () => number;

/**
 * The longest wait before retry number `retry` (1 = the wait between the first and second
 * attempt): `min(maxDelayMs, baseDelayMs × 2^(retry−1))`. Never negative, never NaN, finite; a
 * `retry` below 1 or not finite counts as 1.
 */
export function backoffCapMs(backoff: Backoff, retry: number): number {
  const base = nonNegative(backoff.baseDelayMs);
  const max = nonNegative(backoff.maxDelayMs);
  const exponent = Number.isFinite(retry) ? Math.max(0, Math.min(1_000, Math.floor(retry) - 1)) : 0;
  // 2^exponent overflows to Infinity for large exponents; min() keeps the cap finite.
  return Math.min(max, base * 2 ** exponent);
}

/**
 * The wait before retry number `retry`, with full jitter: uniform in [0, cap] where cap is
 * {@link backoffCapMs}, whole milliseconds. Full jitter (rather than the cap plus a little noise)
 * spreads the retries of many callers that failed together, so a recovering dependency is not hit
 * by a synchronized wave. A `random` outside [0, 1) is clamped into it.
 */
export function backoffDelayMs(backoff: Backoff, retry: number, random: RandomSource = Math.random): number {
  const cap = backoffCapMs(backoff, retry);
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
  return Math.min(cap, Math.floor(unit * (cap + 1)));
}

/**
 * Waits `ms` on `clock`, or less when `signal` aborts. Resolves true when the full wait elapsed and
 * false when it was cut short; never rejects, so retry loops only re-check their own conditions.
 */
export async function waitUnlessAborted(
  clock: Pick<Clock, 'sleep'>,
  ms: number,
  signal: AbortSignal,
): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await clock.sleep(ms, signal);
    return true;
  } catch {
    return false;
  }
}

/** One failed attempt, as {@link RetryOptions.onRetry} is told of it before the wait. */
export interface FailedAttempt {
  readonly err: unknown;
  /** 1 for the wait after the first attempt failed. */
  readonly retry: number;
  readonly delayMs: number;
}

/** How {@link retryWithBackoff} paces, bounds and stops its attempts. */
export interface RetryOptions {
  readonly backoff: Backoff;
  readonly clock: Pick<Clock, 'sleep'>;
  /** `'none'` (default): each wait is the cap itself; `'full'`: uniform in [0, cap] (see {@link backoffDelayMs}). */
  readonly jitter?: 'none' | 'full';
  /** Default `Math.random`; read only with `jitter: 'full'`. */
  readonly random?: RandomSource;
  /** Attempts in all, the first included (default: no limit); after the last one fails, its error is thrown. */
  readonly maxAttempts?: number;
  /** Errors retrying cannot fix: thrown at once, not retried. Default: every error is retried. */
  readonly isFatal?: (err: unknown) => boolean;
  /** Called after each failure that will be retried, before the wait: logging, a consumer heartbeat. */
  readonly onRetry?: (failure: FailedAttempt) => void;
}

/**
 * Runs `step` until it resolves, waiting between failures as `backoff` says: attempt 1 runs at
 * once; after attempt n fails (with an error `isFatal` does not accept, and fewer than
 * `maxAttempts` made), `onRetry` is called and the wait before retry n is `backoffCapMs(backoff,
 * n)` — `baseDelayMs`, doubling, capped at `maxDelayMs` — or, with `jitter: 'full'`, a uniform
 * draw in [0, that].
 *
 * With `signal`: no attempt starts once it aborted, and an abort cuts a wait short; either way the
 * result is `undefined` (an attempt in progress is not interrupted: `step` takes the signal itself
 * if it should). Resolves `{ value }` with the first success. Rejects with a fatal error, or with the
 * last attempt's error once `maxAttempts` are used up; never because of the signal.
 */
export function retryWithBackoff<T>(
  step: (attempt: number) => Promise<T>,
  options: RetryOptions & { readonly signal: AbortSignal },
): Promise<{ readonly value: T } | undefined>;
/** Without a signal: resolves with the first success's value, or rejects as above. */
export function retryWithBackoff<T>(step: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T>;
export async function retryWithBackoff<T>(
  step: (attempt: number) => Promise<T>,
  options: RetryOptions & { readonly signal?: AbortSignal },
): Promise<T | { readonly value: T } | undefined> {
  const { signal } = options;
  const limit = options.maxAttempts === undefined ? Infinity : Math.max(1, Math.floor(options.maxAttempts));
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) return undefined;
    try {
      const value = await step(attempt);
      return signal === undefined ? value : { value };
    } catch (err) {
      if (attempt >= limit || options.isFatal?.(err)) throw err;
      const delayMs =
        options.jitter === 'full'
          ? backoffDelayMs(options.backoff, attempt, options.random)
          : backoffCapMs(options.backoff, attempt);
      options.onRetry?.({ err, retry: attempt, delayMs });
      if (signal === undefined) await options.clock.sleep(delayMs);
      else if (!(await waitUnlessAborted(options.clock, delayMs, signal))) return undefined;
    }
  }
}

function nonNegative(n: number): number {
  return Number.isFinite(n) && n > 0 ? n : 0;
}
