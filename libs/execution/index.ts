/** Running a tool call against a downstream: breakers, retry policy, timeouts, outbound budget. */
export {
  createCircuitBreakers,
  type BreakerOptions,
  type BreakerState,
  type ManagedCircuitBreakers,
} from './breakers.js';
export { createOutboundLimiter, outboundBucketKey } from './outbound-limiter.js';
export {
  backoffCapMs,
  backoffDelayMs,
  isRetryableKind,
  isRetrySafe,
  maxAttempts,
  worstCaseBackoffMs,
  type RandomSource,
} from './retry-policy.js';
export { attemptScope, raceAbort, type AbortCause, type AttemptScope } from './attempt-scope.js';
