import type { CallState } from '../pipeline/call-state.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { StatusCheckAnswer, ToolDefinition } from '../registry/tool-definition.js';
import { invocation, runGuarded } from './run-attempt.js';

/**
 * Asks the downstream, through the tool's own status check, whether this call's effect exists
 *. The check runs under the same limits as an attempt (outbound token, breaker, timeout,
 * deadline) because it is a request to the same service.
 *
 * Never throws: a tool without a check, a check that fails, times out, is refused by the breaker or
 * answers something malformed all count as `unknown`. Status checks are not tool invocations: they
 * are not counted in `toolInvocations` nor recorded as attempts.
 */
export async function checkStatus(
  state: CallState,
  deps: PipelineDeps,
  tool: ToolDefinition,
  key: string,
  attempt: number,
): Promise<StatusCheckAnswer> {
  const safety = tool.retrySafety;
  if (safety.kind !== 'status-check') return { state: 'unknown' };
  const outcome = await runGuarded(state, deps, tool, (signal, assertLive) =>
    safety.check(state.args, invocation(state, key, attempt, signal, assertLive)),
  );
  if (!outcome.ok) return { state: 'unknown' };
  return wellFormed(outcome.value);
}

function wellFormed(answer: unknown): StatusCheckAnswer {
  if (answer === null || typeof answer !== 'object') return { state: 'unknown' };
  const state = (answer as { state?: unknown }).state;
  if (state === 'applied') return { state: 'applied', result: (answer as { result?: unknown }).result };
  if (state === 'not-applied') return { state: 'not-applied' };
  return { state: 'unknown' };
}
