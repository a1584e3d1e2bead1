import { toResultError } from '../core/result-error.js';
import { ToolgateError } from '../core/errors.js';
import type { NormalizedToolCall, ToolCallResult } from '../core/types.js';

/** A call the provider returned in a usable shape. */
export interface NormalizedOk {
  readonly ok: true;
  readonly call: NormalizedToolCall;
}

/**
 * A call the provider returned that cannot become a {@link NormalizedToolCall} (arguments that are not
 * a JSON object, an unsupported call type). It still has an id the model is waiting on, so it must be
 * answered: turn it into a result with {@link refusedCallResult}.
 */
export interface NormalizationFailure {
  readonly ok: false;
  readonly id: string;
  readonly name: string;
  readonly error: ToolgateError;
}

/**
 * One entry per tool call in a provider response, in the provider's order. Normalizers never throw
 * for a bad call; they return a failure entry for it and keep the others.
 */
export type NormalizedCall = NormalizedOk | NormalizationFailure;

/** The provider call ids of `calls`, in order: every one of them must be answered exactly once. */
export function callIds(calls: readonly NormalizedCall[]): string[] {
  return calls.map((c) => (c.ok ? c.call.id : c.id));
}

/**
 * The terminal result for a call refused at the provider edge: outcome from the error's code, no tool
 * invocation (the tool was never reached), no idempotency key (none was computed for it).
 */
export function refusedCallResult(failure: NormalizationFailure): ToolCallResult {
  return {
    callId: failure.id,
    tool: failure.name,
    outcome: failure.error.outcome,
    error: toResultError(failure.error),
    toolInvocations: 0,
  };
}

/** SCHEMA_INVALID for one call whose arguments are not usable; retryable so the model can resend them. */
export function invalidArguments(id: string, name: string, reason: string): NormalizationFailure {
  return {
    ok: false,
    id,
    name,
    error: new ToolgateError('SCHEMA_INVALID', reason, {
      suggestedFix: "Send the arguments as one JSON object that matches the tool's parameter schema.",
    }),
  };
}

/** A JSON object as tool arguments: not null, not an array. */
export function isArgumentsObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** "an array", "null", "a string"…: names the JSON type without echoing the value. */
export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
