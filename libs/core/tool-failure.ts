/**
 * @packageDocumentation
 * How a tool's `execute` says how it failed. toolgate decides what happens next — retry, refuse,
 * release the idempotency claim, reconcile — from whether the tool's effect may have been applied,
 * so a failing tool must say which of three things happened. Each function returns the
 * {@link ToolgateError} to throw:
 *
 * - {@link callerError} — definitely not applied, the arguments were wrong: EXECUTION_ERROR with
 *   CALLER_ERROR, never retried by toolgate; on a state-changing tool the claim is released and
 *   nothing is dead-lettered.
 * - {@link serverError} — definitely not applied, the downstream failed: retried as far as the
 *   tool's retry policy allows (and a retry is safe), then EXECUTION_ERROR with SERVER_ERROR; on a
 *   state-changing tool the claim is released and the call is dead-lettered EXHAUSTED.
 * - {@link outcomeUnknown} — may have been applied: on a state-changing tool, retried only when a
 *   retry is safe (`forwards-key`, or `status-check` after the check), else UNRESOLVED: the claim is
 *   completed (an identical call never runs the tool again) and the call is dead-lettered for the
 *   reconciler. On a read-only tool it is a timeout: retried as allowed, then EXECUTION_ERROR with
 *   TIMEOUT.
 * - Anything else (`throw new Error(...)`) — unknown: classified (HTTP statuses and socket errors
 *   are recognised, see `classify`); what is left is INTERNAL, never retried. On a state-changing
 *   tool that means UNRESOLVED and reconciliation (a `status-check` tool is checked first); on a
 *   read-only tool, EXECUTION_ERROR with INTERNAL.
 *
 * Why a plain error is "unknown" for a state-changing tool: toolgate cannot tell whether the tool
 * threw before or after its request reached the downstream, so it cannot claim the effect did not
 * happen; reporting a failure that in fact applied would invite the model to do it twice. A
 * read-only tool has no effect to lose, so a plain error is just an internal failure there.
 *
 * Messages are shown to the model as they are, in the result's `error.message`: write them for the
 * model — what failed and what it can do — and never put secrets, tokens, internal URLs, a
 * downstream's raw error text or another tenant's data in them. Keep the original error as `cause`:
 * it goes to logs, never to the model. An empty message is replaced by a generic sentence.
 */

import { ToolgateError } from './errors.js';
import type { ErrorCode } from './errors.js';

/** What every tool-failure function accepts. */
export interface ToolFailureOptions {
  /** The error that led to this one: kept as the error's `cause` for logs, never shown to the model. */
  readonly cause?: unknown;
}

/** Options of {@link callerError}. */
export interface CallerErrorOptions extends ToolFailureOptions {
  /** A model-readable hint for how to make the call succeed, e.g. which tool gives a valid id. */
  readonly suggestedFix?: string;
  /**
   * Whether the model may usefully call again with corrected arguments. Default true; false when no
   * argument could make it succeed (the ticket is already closed, the account is frozen).
   */
  readonly retryable?: boolean;
}

/** Options of {@link serverError}. */
export interface ServerErrorOptions extends ToolFailureOptions {
  /**
   * Default true: the failure is transient, the executor retries it as far as the tool's `retry`
   * policy allows (and only when a retry is safe: never for retrySafety `none`), and the model is
   * told it may try again later. False: trying again will not help — the executor does not retry
   * and the model is told so.
   */
  readonly retryable?: boolean;
}

const FALLBACK_MESSAGES: Readonly<Record<'CALLER_ERROR' | 'SERVER_ERROR' | 'TIMEOUT', string>> = {
  CALLER_ERROR: 'The service rejected the request as invalid; nothing was changed.',
  SERVER_ERROR: 'The service failed; nothing was changed.',
  TIMEOUT: 'The request was sent but its answer was lost; its outcome is unknown.',
};

/**
 * The request was wrong and the tool did NOT apply anything: an unknown id, a value the downstream
 * refuses, a state that forbids the change. The model may correct its arguments and call again
 * (unless `retryable: false`); toolgate never retries it by itself.
 *
 * Becomes EXECUTION_ERROR with code CALLER_ERROR. On a state-changing tool the idempotency claim is
 * released (an identical call later runs the tool again) and no dead letter is written.
 *
 * @param message Shown to the model as it is: what failed and what it can do. Never secrets, tokens,
 *   internal URLs, another tenant's data or a downstream's raw error text.
 */
export function callerError(message: string, options: CallerErrorOptions = {}): ToolgateError {
  return failure('CALLER_ERROR', message, options.cause, {
    retryable: options.retryable ?? true,
    ...(options.suggestedFix === undefined ? {} : { suggestedFix: options.suggestedFix }),
  });
}

/**
 * The downstream failed and the tool knows it did NOT apply anything: the service answered with a
 * failure before doing any work, the connection was refused, a precondition check failed on the
 * server's side. Changing the arguments will not help.
 *
 * Only say this when the effect is certainly absent. A legacy system that may fail after committing
 * (a 5xx after the write) is {@link outcomeUnknown}.
 *
 * Becomes EXECUTION_ERROR with code SERVER_ERROR after the retries the tool's policy allows (none
 * when `retryable: false`). On a state-changing tool the claim is released and the call is
 * dead-lettered EXHAUSTED: the action the user asked for was not done, and nothing will do it by
 * itself, so a person sees it.
 *
 * @param message Shown to the model as it is: what failed and what it can do. Never secrets, tokens,
 *   internal URLs, another tenant's data or a downstream's raw error text.
 */
export function serverError(message: string, options: ServerErrorOptions = {}): ToolgateError {
  return failure('SERVER_ERROR', message, options.cause, { retryable: options.retryable ?? true });
}

/**
 * The request may have been applied, and the tool cannot tell: it was sent and the answer was lost
 * (a timeout after sending, a dropped connection, a garbled reply), or the downstream accepted it
 * and then failed in a way that does not say whether it committed.
 *
 * - State-changing tool: toolgate cannot claim the effect is absent. A tool with retrySafety
 *   `forwards-key` is retried under the same idempotency key as far as its policy allows; one with
 *   `status-check` has its check asked first (applied → SUCCESS with the checked result, not
 *   applied → retried or refused with this error and the claim released). Otherwise — or when the
 *   check cannot tell — the call ends UNRESOLVED: the model is told the outcome is being checked and
 *   not to repeat it (this message is then not shown), the claim is completed as UNRESOLVED so an
 *   identical call never runs the tool again, and the call is dead-lettered for the reconciler.
 * - Read-only tool: there is no effect to lose, so it is a timeout: retried as far as the tool's
 *   retry policy allows, then EXECUTION_ERROR with code TIMEOUT and this message.
 *
 * The code is TIMEOUT, the code of every "outcome unknown" failure.
 *
 * @param message Shown to the model as it is: what failed and what it can do. Never secrets, tokens,
 *   internal URLs, another tenant's data or a downstream's raw error text.
 */
export function outcomeUnknown(message: string, options: ToolFailureOptions = {}): ToolgateError {
  return failure('TIMEOUT', message, options.cause, { retryable: true });
}

function failure(
  code: keyof typeof FALLBACK_MESSAGES & ErrorCode,
  message: string,
  cause: unknown,
  fields: { readonly retryable: boolean; readonly suggestedFix?: string },
): ToolgateError {
  const text = typeof message === 'string' && message.trim() !== '' ? message : FALLBACK_MESSAGES[code];
  return new ToolgateError(code, text, { ...fields, ...(cause === undefined ? {} : { cause }) });
}
