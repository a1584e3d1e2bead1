import type { z } from 'zod';
import type { Backoff } from '../core/backoff.js';
import type { ExecutionContext, Principal, StatusCheckAnswer } from '../core/types.js';

/** How a tool is made safe to run again when an earlier attempt's outcome is unknown. */
export type RetrySafety<I, O = unknown> =
  /** No side effects: always safe to re-run. */
  | { readonly kind: 'read-only' }
  /** The downstream deduplicates on the idempotency key we forward (`ToolInvocation.idempotencyKey`). */
  | { readonly kind: 'forwards-key' }
  /** The downstream has no key, but its state can be queried: see {@link StatusCheckSafety}. */
  | StatusCheckSafety<I, O>
  /** Nothing makes it safe: an unknown outcome is UNRESOLVED and goes to reconciliation. */
  | { readonly kind: 'none' };

/**
 * A downstream without idempotency keys whose state can be asked. The tool declares the question and
 * the effect separately, and the executor runs the protocol between them (`libs/guards/execute.ts`):
 * `check` first; `apply` only after a decisive "not applied", and only right after the executor has
 * verified that it still holds the call's lease (the fence); after an `apply` whose outcome is
 * unknown, `check` again until its answer is decisive. The rules a tool author relies on are in
 * ARCHITECTURE.md, "Status checks: when is “not applied” true?".
 */
export interface StatusCheckSafety<I, O = unknown> {
  readonly kind: 'status-check';
  /**
   * Read-only: does this call's effect exist? Answer `not-applied` only when that is certain — no
   * send of this call can still land (the downstream reports a final state, or every send's
   * deadline has passed); answer `unknown` while it is not. Throwing a `callerError` refuses the
   * call without sending (e.g. the natural key already holds a different effect); any other throw
   * counts as `unknown`. `inv.attempt` is the number of sends this execution made before the check
   * (0: none yet).
   */
  readonly check: StatusCheck<I>;
  /**
   * The effect: one request to the downstream, sent at once (no waiting before it: a pause there is
   * a pause after the fence). Pass `inv.effectDeadlineMs` on when the downstream can be told a
   * deadline: that turns the fence into one no pause of this process can break. Never retries by
   * itself; the executor decides.
   */
  readonly apply: (args: I, inv: ToolInvocation) => Promise<O>;
  /**
   * How long after a send ended (answered, abandoned at its timeout, or taken over from a stopped
   * executor) a `not-applied` answer becomes trustworthy: the longest the downstream may still be
   * working on a request its caller stopped waiting for. Earlier, `not-applied` is treated as
   * `unknown`. Default 0: the check's own answer is authoritative (it answers `unknown` itself
   * until it can tell, as `StatusCheckAdapter` does from the ledger of send deadlines).
   */
  readonly settleMs?: number;
}

/** Asks the downstream whether the effect of this call exists. Must itself be read-only. */
export type StatusCheck<I> = (args: I, inv: ToolInvocation) => Promise<StatusCheckAnswer>;

/** Defined in core because the case store records it too; re-exported for tool authors. */
export type { StatusCheckAnswer } from '../core/types.js';

/** A tool's retries: the waits between attempts grow as any backoff does (see `Backoff`). */
export interface RetryPolicy extends Backoff {
  /** Total attempts including the first (1 = no retry). */
  readonly maxAttempts: number;
}

export interface RateLimitSpec {
  readonly capacity: number;
  readonly refillPerSecond: number;
  /** Which buckets a call spends from; each is a separate budget. */
  readonly per: readonly ('principal' | 'tool' | 'tenant')[];
}

/** Rough cost of one call, used by the cost model (token equivalents the result adds to context). */
export interface CostEstimate {
  readonly tokensIn: number;
  readonly tokensOut: number;
}

/** What a tool implementation receives besides its validated arguments. */
export interface ToolInvocation {
  readonly ctx: ExecutionContext;
  readonly idempotencyKey: string;
  /** 1-based attempt number within this execution. */
  readonly attempt: number;
  /** Aborted when the per-call timeout or the batch deadline passes. Implementations must honour it. */
  readonly signal: AbortSignal;
  /**
   * Throws TIMEOUT when this attempt's time limit has passed by the clock — also when the timer
   * that aborts `signal` has not run yet, as after the executor process was paused (SIGSTOP, a VM
   * freeze): it resumes with every timer overdue, and a tool whose own wait ends first would carry
   * on. By then the call's idempotency lease may have run out and another executor taken the call
   * over. Call it right before an effect the downstream cannot deduplicate (tools made safe by a
   * status check): it closes that window to the few instructions between the check and the request.
   * Tools that forward their idempotency key need not; the downstream's dedupe fences them. It also
   * throws once the call's idempotency lease has run out by this process's clock.
   */
  readonly assertLive: () => void;
  /**
   * Epoch ms, by this process's clock: the latest instant at which this attempt's effect may still
   * be applied — the earlier of the attempt's time limit and the end of the call's idempotency lease
   * (after which another executor may take the call over). A downstream that can be told to refuse a
   * request after a deadline should be given this one. Undefined for read-only tools (no lease).
   */
  readonly effectDeadlineMs?: number;
}

/**
 * The static description of one tool version. Everything the guard pipeline needs to decide about a
 * call is here; nothing is read from the call's arguments except the validated input.
 */
export interface ToolDefinition<I = unknown, O = unknown> {
  readonly name: string;
  /** Semantic version string; name+version is unique in a registry. */
  readonly version: string;
  /** Written for the model: when to use it, its nearest confusable neighbour, its constraints. */
  readonly description: string;
  readonly input: z.ZodType<I>;
  /** Output shape; keys not declared are stripped (allow-list redaction). */
  readonly output: z.ZodType<O>;
  readonly scopes: readonly string[];
  /**
   * Resource-level rule run after the scope check, e.g. "the principal owns this order". Receives the
   * verified principal and validated input. Must be free of side effects.
   */
  readonly authorize?: (principal: Principal, args: I, ctx: ExecutionContext) => boolean | Promise<boolean>;
  readonly rateLimit?: RateLimitSpec;
  readonly cost?: CostEstimate;
  /** Changes state in a way that cannot be undone by a later call (delete, pay, send). */
  readonly destructive: boolean;
  /** False for read-only tools; true means the tool has side effects. */
  readonly stateChanging: boolean;
  readonly owner: string;
  readonly deprecated?: { readonly reason: string; readonly useInstead?: string };
  /**
   * The resource this call touches, used as the Kafka partition key so conflicting calls serialize.
   * Prefix it with the tenant. Absent: the task id is used.
   */
  readonly conflictKey?: (args: I, ctx: ExecutionContext) => string;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly retrySafety: RetrySafety<I, O>;
  /** Breaker and outbound-limiter group shared by every tool calling the same downstream. */
  readonly downstream?: string;
  /** Argument fields the audit record may keep verbatim; all others are recorded as redacted. */
  readonly auditFields: readonly string[];
  /**
   * The arguments a person must see in full before agreeing to a call: what decides its effect
   * (the amount, the account, the record). Shown first, in this order, and never shortened when a
   * call is put to a person (`presentCall`); a call that cannot show every one of them within the
   * limit is not put to anyone. Each is a top-level key of the input schema and on `auditFields`
   * (a field a person may not see cannot be decisive). Absent: none.
   */
  readonly decisiveFields?: readonly string[];
  /** Serialized-output budget in bytes; larger outputs are truncated to the declared fields, and say so. */
  readonly maxResultBytes?: number;
  /**
   * The tool takes long enough that a caller should not hold a request open for it. Over MCP, a
   * client that supports tasks gets a task handle at once instead of waiting; with `'required'`, a
   * client that does not is refused rather than kept waiting. Absent: the caller waits, and gets a
   * task only when the result is late.
   */
  readonly longRunning?: LongRunning;
  /** Runs the tool once. For a status-check tool it is its `retrySafety.apply`. */
  readonly execute: (args: I, inv: ToolInvocation) => Promise<O>;
}

/** See {@link ToolDefinition.longRunning}. */
export type LongRunning = 'optional' | 'required';

/**
 * A tool definition of any input and output type: what a list of different tools holds. (`unknown`
 * would not do: a tool's `execute` takes its own input type, so it is not a tool of `unknown`.)
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyToolDefinition = ToolDefinition<any, any>;
