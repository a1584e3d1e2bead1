import { describeJsonType, invalidArguments, isArgumentsObject } from './normalized-call.js';
import type { NormalizedCall } from './normalized-call.js';
import type { OpenAIAssistantMessage, OpenAIChatCompletion, OpenAIToolCall } from './provider-shapes.js';

/**
 * The tool calls of an OpenAI chat-completions response, normalized.
 *
 * Contract:
 * - Accepts a whole chat completion (its first choice is used: agent loops request `n = 1`) or one
 *   assistant message; the SDK's `ChatCompletion` and `ChatCompletionMessage` fit. No tool calls → `[]`.
 * - One entry per `tool_calls[]` element, in the provider's order; parallel calls are all returned.
 * - `function.arguments` is parsed here. An empty or all-whitespace string means `{}` (models send it
 *   for parameterless tools). Text that is not JSON, or JSON that is not an object, becomes a
 *   per-call SCHEMA_INVALID failure ("arguments are not valid JSON: …") — never an exception, and the
 *   other calls of the turn are unaffected. The reason names a position, never the argument text.
 * - Custom (free-text) tool calls are refused per call: toolgate tools take JSON object arguments.
 * - Ids are passed through; answering each exactly once is checked by `assertSameCallIds`.
 */
export function normalizeOpenAICalls(
  source: OpenAIChatCompletion | OpenAIAssistantMessage,
): NormalizedCall[] {
  return openAIToolCalls(source).map(normalizeOne);
}

/** The `tool_calls` of the completion's first choice, or of the message; `[]` when there are none. */
export function openAIToolCalls(
  source: OpenAIChatCompletion | OpenAIAssistantMessage,
): readonly OpenAIToolCall[] {
  const message = 'choices' in source ? source.choices[0]?.message : source;
  return message?.tool_calls ?? [];
}

function normalizeOne(toolCall: OpenAIToolCall): NormalizedCall {
  if (toolCall.type !== 'function') {
    return invalidArguments(
      toolCall.id,
      toolCall.custom.name,
      'custom tool calls with free-text input are not supported; call a function tool with JSON arguments',
    );
  }
  const { name, arguments: text } = toolCall.function;
  if (text.trim() === '') return { ok: true, call: { id: toolCall.id, name, arguments: {} } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return invalidArguments(
      toolCall.id,
      name,
      `arguments are not valid JSON: ${parseProblem(err, text.length)}`,
    );
  }
  if (!isArgumentsObject(parsed)) {
    return invalidArguments(
      toolCall.id,
      name,
      `arguments must be a JSON object, got ${describeJsonType(parsed)}`,
    );
  }
  return { ok: true, call: { id: toolCall.id, name, arguments: parsed } };
}

/** V8's parse message quotes the input; keep only where it broke. */
function parseProblem(err: unknown, length: number): string {
  const message = err instanceof Error ? err.message : '';
  const match = /at position (\d+)/.exec(message);
  const position = match?.[1] === undefined ? undefined : Number(match[1]);
  // Cut-off output (the model hit max tokens) is common enough to name; it fails at the very end.
  if (message.includes('end of JSON input') || (position !== undefined && position >= length)) {
    return 'the text ends before the JSON is complete';
  }
  if (position !== undefined) return `syntax error at character ${position + 1}`;
  return 'syntax error';
}
