export { normalizeOpenAICalls, openAIToolCalls } from './openai-normalize.js';
export { normalizeAnthropicCalls, isAnthropicToolUse } from './anthropic-normalize.js';
export { toOpenAIToolMessages } from './openai-results.js';
export { toAnthropicToolResultMessage } from './anthropic-results.js';
export type {
  AnthropicContentBlock,
  AnthropicInputSchema,
  AnthropicMessage,
  AnthropicOtherBlock,
  AnthropicTextBlock,
  AnthropicTool,
  AnthropicToolDefinition,
  AnthropicToolResultBlock,
  AnthropicToolResultMessage,
  AnthropicToolUseBlock,
  JsonSchemaObject,
  OpenAIAssistantMessage,
  OpenAIChatCompletion,
  OpenAICustomToolCall,
  OpenAIFunctionTool,
  OpenAIFunctionToolCall,
  OpenAIToolCall,
  OpenAIToolDefinition,
  OpenAIToolMessage,
  ProviderMessages,
  ProviderTurn,
} from './provider-shapes.js';
export { assertSameCallIds } from './result-ids.js';
export { modelReadableResult, UNRESOLVED_MESSAGE } from './result-text.js';
export type { ModelReadableResult } from './result-text.js';
export { callIds, refusedCallResult } from './normalized-call.js';
export type { NormalizedCall, NormalizedOk, NormalizationFailure } from './normalized-call.js';
