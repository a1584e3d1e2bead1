import { ToolgateError } from '../../libs/core/errors.js';
import type { Principal, ToolCallResult } from '../../libs/core/types.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import type { ToolgateClient } from '../sdk/index.js';
import { clientKeyOf, logicalTaskId } from './logical-call.js';

/** The provider call id of the one call of an MCP turn (MCP calls have no provider id). */
const MCP_CALL_ID = 'mcp-call';

/** Default time after publishing that executors may still start or run a gateway call (ten minutes). */
export const DEFAULT_CALL_DEADLINE_MS = 10 * 60_000;

/** One `tools/call` to run through toolgate. */
export interface GatewayCall {
  readonly principal: Principal;
  readonly tool: ToolDefinition;
  readonly args: Record<string, unknown>;
  readonly meta: Record<string, unknown> | undefined;
  /** How long to wait for the result, ms; a call still unanswered then is answered UNRESOLVED. */
  readonly timeoutMs: number;
  /**
   * The call's deadline on the executors, ms after it is published (default
   * {@link DEFAULT_CALL_DEADLINE_MS}; never shorter than `timeoutMs`): until then an executor that
   * takes the call runs it, whether or not the gateway still waits.
   */
  readonly callDeadlineMs?: number;
  readonly traceId?: string;
  /** Told the toolgate call id once the broker took the call (see the SDK's `onPublished`). */
  readonly onPublished?: (callId: string) => void;
}

/** A tools/call's result and, when the call was published, the identity toolgate gave it. */
export interface GatewayCallOutcome {
  readonly result: ToolCallResult;
  /** The toolgate call id (the executor audits the call under it); absent when nothing was published. */
  readonly callId?: string;
  readonly traceId?: string;
}

/**
 * Runs one MCP tool call as a toolgate call: one call of a one-call turn, published to Kafka by the
 * SDK client (its own reply slot) with the principal it signs, run through the guard pipeline on an
 * executor, answered on the client's reply partition. The task id is the logical call
 * ({@link logicalTaskId}), so repeats share one idempotency key. Resolves with the call's result —
 * UNRESOLVED when none arrived within `timeoutMs` — with the call id and trace of the published
 * call, and rejects only as `runTurn` does (DEPENDENCY_UNAVAILABLE when Kafka refused the publish;
 * nothing ran).
 *
 * The wait is not the call's deadline. "Outcome unknown — do not retry" is only true of a call that
 * may still run, so the call carries its own, later deadline (`callDeadlineMs`): a call that reaches
 * an executor after the gateway stopped waiting (a slow publish, a backlog, a loaded host) still
 * runs, and its result settles the call later (its task, or the idempotency record a repeat reads).
 */
export async function runGatewayCall(client: ToolgateClient, call: GatewayCall): Promise<GatewayCallOutcome> {
  let taskId: string;
  try {
    taskId = logicalTaskId(call.principal, call.tool.name, call.args, clientKeyOf(call.meta));
  } catch (err) {
    if (err instanceof ToolgateError) {
      return {
        result: {
          callId: MCP_CALL_ID,
          tool: call.tool.name,
          outcome: 'SCHEMA_INVALID',
          error: { code: 'SCHEMA_INVALID', message: err.message, retryable: true },
          toolInvocations: 0,
        },
      };
    }
    throw err;
  }
  const outcome = await client.runTurn(
    {
      provider: 'openai',
      response: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: MCP_CALL_ID,
            type: 'function',
            function: { name: call.tool.name, arguments: JSON.stringify(call.args) },
          },
        ],
      },
    },
    {
      principal: call.principal,
      taskId,
      step: 0,
      ...(call.traceId === undefined ? {} : { traceId: call.traceId }),
    },
    {
      timeoutMs: Math.max(call.timeoutMs, call.callDeadlineMs ?? DEFAULT_CALL_DEADLINE_MS),
      waitMs: call.timeoutMs,
      ...(call.onPublished === undefined
        ? {}
        : { onPublished: (calls) => calls[0] !== undefined && call.onPublished?.(calls[0].callId) }),
    },
  );
  const published = outcome.calls[0]?.published;
  return {
    result: outcome.results[0]!,
    ...(published === undefined ? {} : { callId: published.callId, traceId: outcome.traceId }),
  };
}
