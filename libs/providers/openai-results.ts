import type { ToolCallResult } from '../core/types.js';
import type { OpenAIToolMessage } from './provider-shapes.js';
import { assertSameCallIds } from './result-ids.js';
import { modelReadableResult } from './result-text.js';

/**
 * The `tool` role messages answering one OpenAI assistant turn: one per requested call id, in the
 * order of `requestedIds` (the order of the assistant's `tool_calls`), each with the JSON text from
 * {@link modelReadableResult}. Append them right after the assistant message that made the calls.
 *
 * Throws ToolgateError INTERNAL (via {@link assertSameCallIds}) unless `results` answer every
 * requested id exactly once — an unanswered call id makes the next request fail at the provider.
 */
export function toOpenAIToolMessages(
  requestedIds: readonly string[],
  results: readonly ToolCallResult[],
): OpenAIToolMessage[] {
  assertSameCallIds(requestedIds, results);
  const byId = new Map(results.map((r) => [r.callId, r]));
  return requestedIds.map((id) => ({
    role: 'tool',
    tool_call_id: id,
    content: modelReadableResult(byId.get(id)!).text,
  }));
}
