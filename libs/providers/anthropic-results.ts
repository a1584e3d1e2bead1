import type { ToolResultBlockParam, UserMessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ToolCallResult } from '../core/types.js';
import { assertSameCallIds } from './result-ids.js';
import { modelReadableResult } from './result-text.js';

/** A user message that carries only tool results. */
export type AnthropicToolResultMessage = UserMessageParam & {
  readonly content: ToolResultBlockParam[];
};

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
  const content = requestedIds.map((id): ToolResultBlockParam => {
    const { text, isError } = modelReadableResult(byId.get(id)!);
    return isError
      ? { type: 'tool_result', tool_use_id: id, content: text, is_error: true }
      : { type: 'tool_result', tool_use_id: id, content: text };
  });
  return { role: 'user', content };
}
