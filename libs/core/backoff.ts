import type { Clock } from '../ports/clock.js';

/** Delays between retries of a step that waits for a dependency (a store, the broker) to come back. */
export interface BackoffPolicy {
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
}

/** 100 ms doubling to 5 s: quick recovery after a blip, little load on a dependency that is down. */
export const DEFAULT_BACKOFF: BackoffPolicy = { firstDelayMs: 100, maxDelayMs: 5_000 };

/** The delay before retry number `retry` (1-based): first × 2^(retry−1), capped at the maximum. */
export function backoffDelay(policy: BackoffPolicy, retry: number): number {
  const exponent = Math.max(0, Math.min(30, retry - 1));
  return Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** exponent);
}

/**
 * Waits `ms` on `clock`, or less when `signal` aborts. Resolves true when the full wait elapsed and
 * false when it was cut short; never rejects, so retry loops only re-check their own conditions.
 */
export async function waitUnlessAborted(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await clock.sleep(ms, signal);
    return true;
  } catch {
    return false;
  }
}
