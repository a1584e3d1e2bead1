import type { PrincipalRefusalReason } from '../../libs/auth/principal-refusal.js';
import type { ToolCallResult } from '../../libs/core/types.js';
import type { DeadLetterReason } from '../../libs/events/contracts.js';
import type { ToolgateMetrics } from '../../libs/observability/metrics.js';
import { recordResult } from '../../libs/observability/pipeline-metrics.js';

/**
 * What the executor reports about calls the guard pipeline does not see. Runs through the pipeline
 * are measured around it (see `instrumentPipeline`); the executor adds the answers it gives itself
 * and the dead letters it publishes. Implementations must not throw (the executor does not guard
 * them) and must be cheap: they run on the call's path.
 */
export interface ExecutorObserver {
  /**
   * A call answered without a pipeline run: refused before it (unverifiable principal, foreign
   * tenant, arguments that are not an object) or a malformed envelope. Once per answer produced;
   * `args` are the arguments as sent (for token equivalents only).
   */
  callAnswered(result: ToolCallResult, durationMs: number, args: unknown): void;
  /** One dead letter acknowledged by the broker (a redelivered call may report its own again). */
  deadLettered(reason: DeadLetterReason): void;
  /**
   * A call refused because its principal could not be verified or belongs to another tenant, with
   * the reason from the closed list `PRINCIPAL_REFUSAL_REASONS`. Once per refusal, besides the
   * `callAnswered` of the same answer. Optional: an observer without it counts nothing.
   */
  principalRefused?(reason: PrincipalRefusalReason): void;
}

/** Observes nothing; the default. */
export const noExecutorObserver: ExecutorObserver = Object.freeze({
  callAnswered: () => undefined,
  deadLettered: () => undefined,
  principalRefused: () => undefined,
});

/**
 * Feeds toolgate's metrics: answers given without the pipeline are recorded like pipeline results
 * (`recordResult`: outcome, latency, token equivalents), dead letters by reason. Never throws
 * (ToolgateMetrics does not).
 */
export function metricsObserver(metrics: ToolgateMetrics): ExecutorObserver {
  return {
    callAnswered: (result, durationMs, args) =>
      recordResult(metrics, result, durationMs, { arguments: args }),
    deadLettered: (reason) => metrics.observeDeadLetter(reason),
  };
}
