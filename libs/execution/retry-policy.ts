import type { ErrorCode } from '../core/errors.js';
import type { RetryPolicy, RetrySafety } from '../registry/tool-definition.js';

/** A source of uniform numbers in [0, 1), like `Math.random`. Injected so tests can pin the jitter. */
export type RandomSource = () => number;

/**
 * The largest delay allowed before retry number `retry` (1 = the wait between the first and second
 * attempt): `min(maxDelayMs, baseDelayMs × 2^(retry-1))`. Never negative; non-finite or negative
 * policy numbers count as 0.
 */
export function backoffCapMs(policy: RetryPolicy, retry: number): number {
  const base = nonNegative(policy.baseDelayMs);
  const max = nonNegative(policy.maxDelayMs);
  const exponent = Math.max(0, Math.floor(retry) - 1);
  // 2^exponent overflows to Infinity for large exponents; min() keeps the cap finite.
  return Math.min(max, base * 2 ** exponent);
}

/**
 * The wait before retry number `retry`, with full jitter: uniform in [0, cap] where cap is
 * {@link backoffCapMs}. Full jitter (rather than cap plus a little noise) spreads the retries of many
 * callers that failed together, so a recovering downstream is not hit by a synchronized wave.
 * Whole milliseconds.
 */
export function backoffDelayMs(
  policy: RetryPolicy,
  retry: number,
  random: RandomSource = Math.random,
): number {
  const cap = backoffCapMs(policy, retry);
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
  return Math.min(cap, Math.floor(unit * (cap + 1)));
}

/** Total attempts the policy allows, at least 1 (a malformed policy still runs the call once). */
export function maxAttempts(policy: RetryPolicy): number {
  const n = Math.floor(policy.maxAttempts);
  return Number.isFinite(n) && n >= 1 ? n : 1;
}

/** The longest a call can spend waiting between attempts: the sum of every retry's cap. */
export function worstCaseBackoffMs(policy: RetryPolicy): number {
  let total = 0;
  for (let retry = 1; retry < maxAttempts(policy); retry++) total += backoffCapMs(policy, retry);
  return total;
}

/**
 * Failure kinds that retrying can plausibly fix: the downstream did not answer in time, or it failed
 * on its side. Caller errors, refusals and breaker rejections are not retried (the same request would
 * fail the same way, or the breaker says the downstream needs rest).
 */
export function isRetryableKind(code: ErrorCode): boolean {
  return code === 'TIMEOUT' || code === 'SERVER_ERROR';
}

/**
 * Whether running the tool again cannot duplicate its effect: it has none, the downstream dedupes on
 * the forwarded idempotency key, or a status check (made before each retry) says the effect is absent.
 * `none` is never safe.
 */
export function isRetrySafe(safety: RetrySafety<unknown>): boolean {
  return safety.kind !== 'none';
}

function nonNegative(n: number): number {
  return Number.isFinite(n) && n > 0 ? n : 0;
}
