import type { NormalizedToolCall, ToolCallResult } from '../../libs/core/types.js';
import { isAnthropicToolUse, normalizeAnthropicCalls } from '../../libs/providers/anthropic-normalize.js';
import type { NormalizationFailure } from '../../libs/providers/normalized-call.js';
import { normalizeOpenAICalls, openAIToolCalls } from '../../libs/providers/openai-normalize.js';
import type { ProviderMessages, ProviderTurn } from '../../libs/providers/provider-shapes.js';
import { toAnthropicToolResultMessage } from '../../libs/providers/anthropic-results.js';
import { toOpenAIToolMessages } from '../../libs/providers/openai-results.js';
import { assertSameCallIds } from '../../libs/providers/result-ids.js';

/** One requested call as the client sees it before publishing. */
export type TurnCallInput =
  /** Arguments parsed into a JSON object. */
  | {
      readonly kind: 'parsed';
      readonly providerCallId: string;
      readonly tool: string;
      readonly args: Record<string, unknown>;
    }
  /**
   * Arguments that are not a JSON object (unparseable text, an array, a scalar). Published anyway,
   * with the provider's raw text, so the executor refuses it as SCHEMA_INVALID and audits it.
   */
  | {
      readonly kind: 'unparsed';
      readonly providerCallId: string;
      readonly tool: string;
      readonly rawArguments: string;
    }
  /** A call that cannot be published at all (a free-text custom tool call): answered locally. */
  | { readonly kind: 'refused'; readonly failure: NormalizationFailure };

/**
 * The calls of a provider response, in the provider's order, one entry per provider call id.
 * Normalization is libs/providers'; this adds, for the calls it could not normalize, the raw
 * argument text the provider sent (normalization deliberately keeps no copy of it).
 */
export function turnCalls(turn: ProviderTurn): TurnCallInput[] {
  if (turn.provider === 'openai') {
    const normalized = normalizeOpenAICalls(turn.response);
    const raw = openAIToolCalls(turn.response);
    return normalized.map((entry, i): TurnCallInput => {
      if (entry.ok) return parsedInput(entry.call);
      const source = raw[i];
      if (source?.type !== 'function') return { kind: 'refused', failure: entry };
      return {
        kind: 'unparsed',
        providerCallId: entry.id,
        tool: entry.name,
        rawArguments: source.function.arguments,
      };
    });
  }
  const normalized = normalizeAnthropicCalls(turn.response);
  const blocks = turn.response.content.filter(isAnthropicToolUse);
  return normalized.map((entry, i): TurnCallInput => {
    if (entry.ok) return parsedInput(entry.call);
    return {
      kind: 'unparsed',
      providerCallId: entry.id,
      tool: entry.name,
      rawArguments: jsonTextOf(blocks[i]?.input),
    };
  });
}

/** The provider call id of an entry: the id the model waits on. */
export function providerCallIdOf(call: TurnCallInput): string {
  return call.kind === 'refused' ? call.failure.id : call.providerCallId;
}

/**
 * The provider messages answering a turn: OpenAI, one `tool` message per call; Anthropic, ONE user
 * message of `tool_result` blocks (none when the turn made no calls, since an empty user message is
 * invalid). Throws ToolgateError INTERNAL unless `results` answer every requested id exactly once.
 */
export function providerMessages(
  provider: ProviderTurn['provider'],
  requestedIds: readonly string[],
  results: readonly ToolCallResult[],
): ProviderMessages {
  assertSameCallIds(requestedIds, results);
  if (provider === 'openai') return { provider, messages: toOpenAIToolMessages(requestedIds, results) };
  return {
    provider,
    messages: requestedIds.length === 0 ? [] : [toAnthropicToolResultMessage(requestedIds, results)],
  };
}

/** A call the provider's arguments parsed for, as the SDK publishes it. */
function parsedInput(call: NormalizedToolCall): TurnCallInput {
  return { kind: 'parsed', providerCallId: call.id, tool: call.name, args: call.arguments };
}

function jsonTextOf(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}
