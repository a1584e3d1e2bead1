import { backoffCapMs } from '../core/backoff.js';
import type { ErrorCode } from '../core/errors.js';
import type { RetryPolicy, RetrySafety } from '../registry/tool-definition.js';

// One backoff for every retry loop: a tool's retry policy is a Backoff with maxAttempts.
export { backoffCapMs, backoffDelayMs, type RandomSource } from '../core/backoff.js';

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
 * Transient failure kinds, the ones the executor itself retries (within the tool's retry policy and
 * only when a retry is safe): the downstream did not answer in time, or it failed on its side. Caller
 * errors, refusals and breaker rejections are not retried (the same request would fail the same way,
 * or the breaker says the downstream needs rest). Not to be confused with `ToolgateError.retryable`,
 * which tells the model whether calling again may help.
 */
export function isTransientKind(code: ErrorCode): boolean {
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

/**
 * How long after a send ended a status check's "not applied" becomes trustworthy
 * (`retrySafety.settleMs`): 0 for other kinds, and when the tool declares none or nothing usable
 * (not a finite number > 0), so the check's own answer is authoritative. The executor and the
 * reconciler both judge by it.
 */
export function settleMsOf(safety: RetrySafety<unknown>): number {
  if (safety.kind !== 'status-check') return 0;
  const settleMs = safety.settleMs;
  return settleMs !== undefined && Number.isFinite(settleMs) && settleMs > 0 ? settleMs : 0;
}
