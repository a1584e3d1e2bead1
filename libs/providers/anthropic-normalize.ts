import { describeJsonType, invalidArguments, isArgumentsObject } from './normalized-call.js';
import type { NormalizedCall } from './normalized-call.js';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicToolUseBlock } from './provider-shapes.js';

/**
 * The tool calls of an Anthropic Messages API response, normalized.
 *
 * Contract:
 * - One entry per `tool_use` content block, in content order; text, thinking and server-tool blocks
 *   (`server_tool_use` and its results run on Anthropic's side) are skipped. No tool_use → `[]`.
 * - `input` arrives already parsed. A non-object input (null, array, scalar) becomes a per-call
 *   SCHEMA_INVALID failure, never an exception; the other calls of the turn are unaffected.
 * - Ids are passed through; answering each exactly once is checked by `assertSameCallIds`.
 */
export function normalizeAnthropicCalls(message: AnthropicMessage): NormalizedCall[] {
  return message.content.filter(isAnthropicToolUse).map(normalizeOne);
}

/**
 * True for a client `tool_use` block. The `type` tag is Anthropic's contract for the block's shape:
 * a block tagged `tool_use` carries `id`, `name` and `input`.
 */
export function isAnthropicToolUse(block: AnthropicContentBlock): block is AnthropicToolUseBlock {
  return block.type === 'tool_use';
}

function normalizeOne(block: AnthropicToolUseBlock): NormalizedCall {
  const input = block.input;
  if (!isArgumentsObject(input)) {
    return invalidArguments(
      block.id,
      block.name,
      `input must be a JSON object, got ${describeJsonType(input)}`,
    );
  }
  return { ok: true, call: { id: block.id, name: block.name, arguments: input } };
}
