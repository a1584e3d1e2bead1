import type { PrincipalVerifier } from '../auth/principal-verifier.js';
import type { ToolgateError } from '../core/errors.js';
import type { ExecutionContext } from '../core/types.js';
import type { Clock } from '../core/clock.js';
import type { IdempotencyStore } from '../ports/idempotency-store.js';
import type { IdempotencyTombstones } from '../ports/idempotency-tombstones.js';
import type { RateLimiter } from '../ports/rate-limiter.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import type { StageDecision } from '../core/audit-record.js';

/** Finds the definition a call was made against (name, pinned version, tenant override applied). */
export interface ToolResolver {
  resolve(
    name: string,
    opts: { readonly version?: string; readonly tenant: string },
  ):
    | { readonly ok: true; readonly tool: ToolDefinition }
    | { readonly ok: false; readonly error: ToolgateError };
}

export type PolicyDecision =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      readonly ruleId: string;
      /** Actionable, model-readable: what was wrong and what to do instead. */
      readonly reason: string;
      /** Whether an alternative exists that the model could take (makes the refusal retryable). */
      readonly alternative?: string;
    };

/** Business rules, fed by data. Pure: no I/O, no side effects. First violated rule wins. */
export interface PolicyEngine {
  /** Identifies the rule set in force; bound into preview tokens so a policy change invalidates them. */
  readonly version: string;
  evaluate(tool: ToolDefinition, args: unknown, ctx: ExecutionContext): PolicyDecision;
}

/**
 * One circuit breaker per downstream. `run` throws ToolgateError('BREAKER_OPEN') without calling `fn`
 * while the breaker is open.
 */
export interface CircuitBreakers {
  run<T>(downstream: string, fn: () => Promise<T>): Promise<T>;
}

/** Shared outbound budget per downstream. `acquire` waits for a token, or rejects when `signal` aborts. */
export interface OutboundLimiter {
  acquire(downstream: string, signal: AbortSignal): Promise<void>;
}

/** Hooks for metrics and logs; every method optional, never allowed to affect the decision. */
export interface PipelineObserver {
  onStage?(tool: string, decision: StageDecision): void;
  onAttempt?(tool: string, attempt: number, result: string, durationMs: number): void;
  /**
   * A claim was taken for a key that was claimed before but whose record has expired (it is older
   * than `resultTtlMs`): the call runs again. Reported only with `PipelineDeps.tombstones`.
   */
  onClaimAfterExpiry?(tool: string): void;
}

export interface PipelineSettings {
  /** How long a completed result is remembered for duplicates. */
  readonly resultTtlMs: number;
  /** Added to the tool's worst-case run time to size the in-flight lease. */
  readonly leaseMarginMs: number;
  /**
   * How long a claimed key's tombstone lives (choose well above `resultTtlMs`); with
   * `PipelineDeps.tombstones`. Default: 30 days.
   */
  readonly tombstoneTtlMs?: number;
}

/** Everything the stages use. The pipeline imports ports only, never a client library. */
export interface PipelineDeps {
  readonly tools: ToolResolver;
  readonly idempotency: IdempotencyStore;
  /**
   * Optional: marks of claimed keys kept longer than their records, so a call repeated after the
   * retention is counted (`observer.onClaimAfterExpiry`) and named in its audit record. Never changes
   * a decision; failures are ignored. One extra store command per claim, sent with the claim.
   */
  readonly tombstones?: IdempotencyTombstones;
  readonly rateLimiter: RateLimiter;
  /**
   * Verifies the principal assertion of a signed run (`RunOptions.signed`). Without it,
   * `verify-principal` refuses every signed call (fail closed); runs that are not signed never use it.
   */
  readonly verifier?: PrincipalVerifier;
  readonly policy: PolicyEngine;
  readonly breakers: CircuitBreakers;
  readonly outbound: OutboundLimiter;
  readonly clock: Clock;
  /** This executor instance's identity: the owner written into idempotency leases. */
  readonly owner: string;
  readonly settings: PipelineSettings;
  readonly observer?: PipelineObserver;
}
