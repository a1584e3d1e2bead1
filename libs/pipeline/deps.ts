import type { PrincipalVerifier } from '../auth/principal-verifier.js';
import type { ToolgateError } from '../core/errors.js';
import type { ExecutionContext } from '../core/types.js';
import type { Clock } from '../core/clock.js';
import type { IdempotencyStore } from '../ports/idempotency-store.js';
import type { IdempotencyTombstones } from '../ports/idempotency-tombstones.js';
import type { RateLimiter } from '../ports/rate-limiter.js';
import type { AnyToolDefinition, ToolDefinition } from '../registry/tool-definition.js';
import type { StageDecision } from '../core/audit-record.js';
import type { AggregateFact } from '../core/aggregate-fact.js';
import type { FactStore } from '../ports/fact-store.js';

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
      /**
       * The rule could not be evaluated (a value it reads is missing or not comparable), so the call
       * is refused without the rule having judged it: fail closed.
       */
      readonly unevaluable?: true;
    };

/**
 * The aggregate facts a call is judged with, by fact name, in the fact's units (ten-thousandths for
 * sums, 1 per call for counts), each the total as it would stand with this call counted.
 */
export type FactValues = Readonly<Record<string, number>>;

/**
 * Business rules. `evaluate` is pure: no I/O, no side effects, the same answer for the same input;
 * the first refusing rule answers. The aggregates it reads are fetched by the pipeline beforehand
 * (`factsOf` says which) and passed as `facts`; a fact it needs but is not given refuses the call.
 */
export interface PolicyEngine {
  /** Identifies the rule set in force; bound into preview tokens so a policy change invalidates them. */
  readonly version: string;
  /** The aggregate facts the rules about this tool read, and its settled calls add to. */
  factsOf(tool: string): readonly AggregateFact[];
  /**
   * The top-level arguments the rules about this tool read (`all` when they read them whole), so a
   * replay knows which audited arguments it needs. Absent: assume all.
   */
  argumentsRead?(tool: string): ReadonlySet<string> | 'all';
  evaluate(tool: AnyToolDefinition, args: unknown, ctx: ExecutionContext, facts?: FactValues): PolicyDecision;
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
  /** The shadow policy decided otherwise than the active one (`allowed`: what the shadow said). */
  onShadowDisagreement?(tool: string, shadowAllowed: boolean): void;
  /** A settled call's contribution to an aggregate fact could not be recorded (store failure). */
  onFactRecordFailure?(tool: string): void;
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
  /**
   * A candidate policy run beside `policy` on every call that reaches the business rules: what it
   * would decide is recorded (audit record, `observer.onShadowDisagreement`), never acted on.
   */
  readonly shadowPolicy?: PolicyEngine;
  /**
   * Where the aggregate facts of the rules live. Required when a policy declares facts: without it,
   * a call whose rules read a fact is refused (fail closed).
   */
  readonly facts?: FactStore;
  readonly breakers: CircuitBreakers;
  readonly outbound: OutboundLimiter;
  readonly clock: Clock;
  /** This executor instance's identity: the owner written into idempotency leases. */
  readonly owner: string;
  readonly settings: PipelineSettings;
  readonly observer?: PipelineObserver;
}
