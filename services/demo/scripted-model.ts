import type {
  AnthropicContentBlock,
  AnthropicMessage,
  OpenAIAssistantMessage,
} from '../../libs/providers/provider-shapes.js';
import type { ProviderTurn } from '../sdk/index.js';

/** One tool call a (scripted) model proposes. */
export interface ProposedCall {
  readonly tool: string;
  readonly args: Record<string, unknown>;
}

/**
 * The assistant message an OpenAI model returns when it decides to call tools: no text, one
 * `tool_calls` entry per call, arguments as a JSON string. The demo scripts the model's
 * decisions so the story is the same on every run; everything after this message is real.
 */
export function openAITurn(turnId: string, calls: readonly ProposedCall[]): ProviderTurn {
  const message: OpenAIAssistantMessage = {
    role: 'assistant',
    tool_calls: calls.map((call, i) => ({
      id: `call_${turnId}_${i}`,
      type: 'function' as const,
      function: { name: call.tool, arguments: JSON.stringify(call.args) },
    })),
  };
  return { provider: 'openai', response: message };
}

/**
 * The same decision from an Anthropic model: `tool_use` content blocks with already-parsed input, after a line of text.
 */
export function anthropicTurn(turnId: string, text: string, calls: readonly ProposedCall[]): ProviderTurn {
  const content: AnthropicContentBlock[] = [
    { type: 'text', text },
    ...calls.map((call, i): AnthropicContentBlock => ({
      type: 'tool_use',
      id: `toolu_${turnId}_${i}`,
      name: call.tool,
      input: call.args,
    })),
  ];
  const response: AnthropicMessage = { content };
  return { provider: 'anthropic', response };
}
