import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { classify } from '../core/classify.js';
import { ToolgateError } from '../core/errors.js';
import { callerError, outcomeUnknown, serverError } from '../core/tool-failure.js';

/** The id of the business rule that refuses upstream tools whose schema changed. */
export const PIN_RULE_ID = 'mcp-upstream-pin';

/** The model-readable sentence of a refusal of a tool whose upstream definition changed. */
export function changedToolMessage(name: string): string {
  return (
    `The tool ${name} was not run: its definition on the server that provides it changed after an ` +
    'operator approved it, and it stays disabled until the change is reviewed. Do not retry it; ' +
    'tell the user this tool is unavailable for now.'
  );
}

/**
 * The refusal of a call to an imported tool whose upstream schema digest no longer matches its pin
 * (found by `refresh()`), raised before anything is sent upstream.
 *
 * Code POLICY_VIOLATION, not retryable: running only the schema an operator accepted is a rule of
 * the deployment, and that rule refuses the call. The code fits where the others do not:
 * - the execute stage treats it as "definitely not applied" (the claim is released, the call is
 *   never UNRESOLVED), which UNKNOWN_TOOL, TOOL_DEPRECATED or INTERNAL would not be;
 * - the downstream's breaker does not count it, so one changed tool does not take the upstream's
 *   other tools down (SERVER_ERROR and TIMEOUT would count);
 * - it is not transient, so nothing retries it and the model is not invited to (SERVER_ERROR,
 *   DEPENDENCY_UNAVAILABLE and BREAKER_OPEN say "try later");
 * - it blames neither the model's arguments (SCHEMA_INVALID, CALLER_ERROR) nor the caller's
 *   rights (UNAUTHORIZED);
 * - its outcome is a refusal, which tells the model the tool did not run.
 * The same code and message come from the catalog's business rule ({@link PIN_RULE_ID}) when the
 * change is known before the call reaches execution.
 */
export function changedToolError(name: string, detail: string): ToolgateError {
  return new ToolgateError('POLICY_VIOLATION', changedToolMessage(name), {
    retryable: false,
    cause: new Error(`rule ${PIN_RULE_ID}: ${detail}`),
  });
}

/** Longest stretch of the upstream's error text passed on to the model. */
export const MAX_TOOL_ERROR_TEXT = 2_000;

/**
 * An upstream result with `isError: true`: the tool ran and answered that it failed (MCP's channel
 * for failures the model should see and may correct). It becomes CALLER_ERROR, retryable: the
 * tool's own answer, not a transport failure, so it does not count against the upstream's breaker,
 * is not retried by toolgate, and — as MCP defines `isError` as the tool's failure — is taken as
 * "not applied": the idempotency claim is released and an identical call later runs again.
 *
 * The message carries the tool's error text (text items, joined, at most
 * {@link MAX_TOOL_ERROR_TEXT} characters): it was written for the model, exactly as a successful
 * answer's content is.
 */
export function toolReportedError(text: string): ToolgateError {
  const trimmed = text.trim();
  const shown =
    trimmed === ''
      ? 'The tool reported an error without a message.'
      : `The tool reported an error: ${trimmed.length > MAX_TOOL_ERROR_TEXT ? `${trimmed.slice(0, MAX_TOOL_ERROR_TEXT)}…` : trimmed}`;
  return callerError(shown, { retryable: true });
}

/** JSON-RPC errors with which an MCP server rejects a request before running anything. */
const REJECTED_BEFORE_RUNNING: ReadonlySet<number> = new Set([
  ProtocolErrorCode.ParseError,
  ProtocolErrorCode.InvalidRequest,
  ProtocolErrorCode.MethodNotFound,
  ProtocolErrorCode.InvalidParams,
]);

/** The JSON-RPC error a server answers when the call needs the user to visit a URL first. */
const URL_ELICITATION_REQUIRED: number = ProtocolErrorCode.UrlElicitationRequired;

/**
 * What a failed `tools/call` means for the effect, as the ToolgateError the execute stage acts on.
 * Pure and total; the upstream's own error text never reaches the message (it stays in `cause`).
 *
 * - JSON-RPC error ParseError / InvalidRequest / MethodNotFound / InvalidParams: the upstream
 *   refused the request before running the tool → CALLER_ERROR (not applied).
 * - JSON-RPC URL-elicitation-required, or a result that asks for interactive input (2026-07-28
 *   `input_required`): the tool needs a person's input, which toolgate does not provide; it did
 *   not complete → CALLER_ERROR, not retryable.
 * - Any other JSON-RPC error (InternalError, server-defined codes): the upstream failed while
 *   handling the call, possibly after acting → outcome unknown (TIMEOUT: UNRESOLVED for a
 *   state-changing tool, retried for a read-only one).
 * - The request timed out, the connection closed before the answer, or the answer could not be
 *   read → outcome unknown.
 * - Not connected (the upstream process or session is gone): nothing was sent → SERVER_ERROR.
 * - Anything else — HTTP statuses (429, 5xx, 401/403…), socket errors, aborts — is left to
 *   `classify`, toolgate's one classification of downstream failures.
 */
export function upstreamCallFailure(err: unknown): ToolgateError {
  if (err instanceof ToolgateError) return err;
  if (err instanceof ProtocolError) {
    if (REJECTED_BEFORE_RUNNING.has(err.code)) {
      return callerError('The upstream server rejected the call as invalid; the tool did not run.', {
        cause: err,
        suggestedFix: 'Check the arguments against the tool schema and what the user asked for.',
      });
    }
    if (err.code === URL_ELICITATION_REQUIRED) return needsInput(err);
    return outcomeUnknown(
      'The upstream server failed while handling the call; whether the tool acted is unknown.',
      { cause: err },
    );
  }
  if (err instanceof SdkError) {
    switch (err.code) {
      case SdkErrorCode.RequestTimeout:
        return outcomeUnknown('The upstream server did not answer in time; the outcome is unknown.', {
          cause: err,
        });
      case SdkErrorCode.ConnectionClosed:
      case SdkErrorCode.InvalidResult:
        return outcomeUnknown(
          'The connection to the upstream server ended before a readable answer arrived; the outcome is unknown.',
          { cause: err },
        );
      case SdkErrorCode.NotConnected:
        return serverError('The upstream server is not connected; the call was not sent.', { cause: err });
      case SdkErrorCode.UnsupportedResultType:
      case SdkErrorCode.InputRequiredRoundsExceeded:
        return needsInput(err);
      default:
        return classify(err);
    }
  }
  return classify(err);
}

/** Whether a failed request means the client's connection is gone (reconnect before the next one). */
export function connectionGone(err: unknown): boolean {
  return (
    err instanceof SdkError &&
    (err.code === SdkErrorCode.ConnectionClosed || err.code === SdkErrorCode.NotConnected)
  );
}

function needsInput(cause: unknown): ToolgateError {
  return callerError(
    'The tool asked for interactive input from a person, which this gateway cannot provide; it did not complete.',
    { cause, retryable: false },
  );
}
