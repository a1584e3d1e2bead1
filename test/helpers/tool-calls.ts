import type { ExecutionContext, NormalizedToolCall, Principal } from '../../libs/core/types.js';
import type { OpenAIAssistantMessage, OpenAIFunctionToolCall } from '../../libs/providers/provider-shapes.js';

let task = 0;
/**
 * A context for `principal` in its own tenant. Each call gets a fresh task id (`task-<n>`, unique
 * within the test process) unless `overrides` pin one; step and index start at 0.
 */
export function ctxFor(principal: Principal, overrides: Partial<ExecutionContext> = {}): ExecutionContext {
  task += 1;
  return {
    principal,
    tenant: principal.tenant,
    taskId: `task-${task}`,
    step: 0,
    index: 0,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    ...overrides,
  };
}

let seq = 0;
/** A normalized call to `name`; each call gets a fresh id (`call_<n>`, unique within the test process). */
export function toolCall(name: string, args: Record<string, unknown>): NormalizedToolCall {
  seq += 1;
  return { id: `call_${seq}`, name, arguments: args };
}

/** An OpenAI assistant message asking for `calls` (arguments as JSON text, passed on as written). */
export function openAIToolCallMessage(
  calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>,
): OpenAIAssistantMessage & { readonly tool_calls: readonly OpenAIFunctionToolCall[] } {
  return {
    role: 'assistant',
    content: null,
    refusal: null,
    tool_calls: calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    })),
  };
}

/** A chat completion as OpenAI's API returns it, asking for `calls` (arguments as JSON text). */
export function openAICompletion(
  calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>,
): Record<string, unknown> {
  return {
    id: `chatcmpl-${calls[0]?.id ?? 'none'}`,
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'gpt-4.1',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        logprobs: null,
        message: openAIToolCallMessage(calls),
      },
    ],
  };
}
