import type { ToolCallResult } from '../core/types.js';
import type { AnthropicToolResultBlock, AnthropicToolResultMessage } from './provider-shapes.js';
import { assertSameCallIds } from './result-ids.js';
import { modelReadableResult } from './result-text.js';

/**
 * The ONE user message answering one Anthropic assistant turn: a `tool_result` block per requested
 * `tool_use` id, in the order of `requestedIds`, with the JSON text from {@link modelReadableResult}.
 * `is_error: true` marks refused and failed calls; success, duplicates and UNRESOLVED carry no flag
 * (an unknown outcome is not a failure). Anthropic has no `tool` role and expects all results of a
 * turn together, tool results first, so they are never split across messages.
 *
 * Throws ToolgateError INTERNAL (via {@link assertSameCallIds}) unless `results` answer every
 * requested id exactly once.
 */
export function toAnthropicToolResultMessage(
  requestedIds: readonly string[],
  results: readonly ToolCallResult[],
): AnthropicToolResultMessage {
  assertSameCallIds(requestedIds, results);
  const byId = new Map(results.map((r) => [r.callId, r]));
  const content = requestedIds.map((id): AnthropicToolResultBlock => {
    const { text, isError } = modelReadableResult(byId.get(id)!);
    return isError
      ? { type: 'tool_result', tool_use_id: id, content: text, is_error: true }
      : { type: 'tool_result', tool_use_id: id, content: text };
  });
  return { role: 'user', content };
}
