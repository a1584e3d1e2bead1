import type { Outcome } from './outcome.js';
import type { ErrorCode } from './errors.js';

/**
 * One tool call proposed by a model, after provider normalization. `arguments` is untrusted data:
 * nothing in it may ever be used as an authorization fact.
 */
export interface NormalizedToolCall {
  /** The provider's call id (OpenAI `tool_calls[].id`, Anthropic `tool_use.id`). Unique within a turn. */
  readonly id: string;
  readonly name: string;
  /** Parsed arguments; never a string. Unparseable provider JSON is refused before this type exists. */
  readonly arguments: Record<string, unknown>;
  /** The tool version the model was shown; absent means the registry's current version. */
  readonly version?: string;
}

/**
 * The verified caller. Built only from a verified assertion (signed principal) by the auth layer;
 * never from model output.
 */
export interface Principal {
  readonly id: string;
  readonly tenant: string;
  /** The kind of actor: an end user, an agent acting for one, or a service. */
  readonly kind: 'user' | 'agent' | 'service';
  readonly scopes: readonly string[];
  readonly roles: readonly string[];
  /** For an agent acting on behalf of a user: that user's id. */
  readonly onBehalfOf?: string;
  /**
   * An opaque, short-lived reference to the end user's own downstream token, deposited by the agent
   * backend in a token reference store. Never the token itself: the token stays out of
   * Kafka; an executor-side tool resolves the reference just before calling the downstream.
   */
  readonly delegationRef?: string;
}

/**
 * Verified context attached by the agent backend before the first publish. The idempotency key is a
 * function of (taskId, step, index, tool, canonical arguments) and is computed once.
 */
export interface ExecutionContext {
  readonly principal: Principal;
  readonly tenant: string;
  readonly taskId: string;
  /** The agent loop's step (round) number within the task. */
  readonly step: number;
  /** Position of this call within its turn (0-based). */
  readonly index: number;
  /** W3C trace id (32 lowercase hex chars). */
  readonly traceId: string;
  /** Absolute deadline, epoch milliseconds. */
  readonly deadlineMs?: number;
}

/** A structured, model-readable error carried inside a non-success result. */
export interface ResultError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly suggestedFix?: string;
}

/** The one terminal result of one call. Exactly one per call id is delivered to the requester. */
export interface ToolCallResult {
  readonly callId: string;
  readonly tool: string;
  readonly outcome: Outcome;
  /** Present on SUCCESS and DUPLICATE: the validated, redacted output the model may see. */
  readonly payload?: unknown;
  readonly error?: ResultError;
  /** The idempotency key, when one was computed. */
  readonly idempotencyKey?: string;
  /** Number of times the tool itself was invoked for this attempt (0 when refused before execution). */
  readonly toolInvocations: number;
}

/**
 * What a downstream answers when asked whether the effect of one call exists (a tool's status
 * check): `applied` with the result the call produced, `not-applied`, or `unknown` when it cannot
 * tell.
 */
export type StatusCheckAnswer =
  | { readonly state: 'applied'; readonly result: unknown }
  | { readonly state: 'not-applied' }
  | { readonly state: 'unknown' };
