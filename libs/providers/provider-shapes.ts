/**
 * The provider wire shapes toolgate reads and produces, declared here rather than imported from the
 * `openai` and `@anthropic-ai/sdk` packages. Those SDKs are optional for toolgate's users: a
 * declaration file that named them would fail to resolve without them (or, under skipLibCheck,
 * silently turn every provider argument into `any`). Each type holds exactly the fields toolgate
 * reads or writes, with the SDK's names and literal discriminants, so:
 *
 * - the SDKs' response types (`ChatCompletion`, `ChatCompletionMessage`, `Message`) are assignable to
 *   the input shapes here, and
 * - the output shapes here are assignable to the SDKs' request types (`ChatCompletionToolMessageParam`,
 *   `ChatCompletionFunctionTool`, `ToolResultBlockParam`, `UserMessageParam`, `Tool`), so they can be
 *   passed straight to `openai.chat.completions.create` and `anthropic.messages.create`.
 *
 * Both directions are checked against the real SDK types in test/unit/providers/sdk-compat.test.ts.
 * Inputs use readonly arrays (anything the SDK returns fits); outputs use mutable arrays, because the
 * SDKs' parameter types do and a readonly array is not assignable to a mutable one.
 */

/** A JSON Schema object as plain data: open by nature, its keywords are not enumerated. */
export type JsonSchemaObject = { readonly [keyword: string]: unknown };

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions: what toolgate reads
// ---------------------------------------------------------------------------------------------

/** A function tool call in an assistant message: JSON arguments as text, parsed by toolgate. */
export interface OpenAIFunctionToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    /** The arguments as the model wrote them: JSON text, possibly invalid or empty. */
    readonly arguments: string;
  };
}

/** A custom (free-text input) tool call. toolgate refuses these per call; it reads only id and name. */
export interface OpenAICustomToolCall {
  readonly id: string;
  readonly type: 'custom';
  readonly custom: { readonly name: string };
}

/** One entry of an assistant message's `tool_calls`. */
export type OpenAIToolCall = OpenAIFunctionToolCall | OpenAICustomToolCall;

/**
 * An assistant message of a chat completion (`ChatCompletionMessage` fits). `content` and `refusal`
 * are not read; they are declared so that a message written out as an object literal in the SDK's
 * shape (`{ role: 'assistant', content: null, tool_calls: [...] }`) is accepted as well.
 */
export interface OpenAIAssistantMessage {
  readonly role: 'assistant';
  readonly content?: string | null;
  readonly refusal?: string | null;
  /** Absent or empty when the model answered in text only. */
  readonly tool_calls?: readonly OpenAIToolCall[] | null;
}

/** A chat completion (`ChatCompletion` fits). Only the first choice is read: agent loops use `n = 1`. */
export interface OpenAIChatCompletion {
  readonly choices: readonly { readonly message: OpenAIAssistantMessage }[];
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions: what toolgate produces
// ---------------------------------------------------------------------------------------------

/** A `tool` role message answering one call (assignable to `ChatCompletionToolMessageParam`). */
export interface OpenAIToolMessage {
  role: 'tool';
  tool_call_id: string;
  /** JSON text the model reads. */
  content: string;
}

/**
 * A function tool definition for the request's `tools` (assignable to `ChatCompletionFunctionTool`
 * and so to `ChatCompletionTool`).
 */
export interface OpenAIFunctionTool {
  type: 'function';
  function: {
    name: string;
    description: string;
    parameters: JsonSchemaObject;
    strict: boolean;
  };
}

/**
 * A tool definition as a caller may hand it to a check: a function tool with the optional fields the
 * API allows (a `ChatCompletionFunctionTool` fits), or a custom tool (which checks refuse).
 */
export type OpenAIToolDefinition =
  | {
      readonly type: 'function';
      readonly function: {
        readonly name: string;
        readonly description?: string;
        readonly parameters?: JsonSchemaObject;
        readonly strict?: boolean | null;
      };
    }
  | { readonly type: 'custom'; readonly custom: { readonly name: string } };

// ---------------------------------------------------------------------------------------------
// Anthropic Messages: what toolgate reads
// ---------------------------------------------------------------------------------------------

/** A client tool call: `input` is already-parsed JSON, normally an object. */
export interface AnthropicToolUseBlock {
  readonly type: 'tool_use';
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
}

/** A text block. toolgate does not read text; it is declared for callers that build turns by hand. */
export interface AnthropicTextBlock {
  readonly type: 'text';
  readonly text: string;
}

/**
 * Any other content block (thinking, server-side tool use and its results, …), known only by its
 * `type`. Anthropic adds block types often; naming them all would make the `Message` of a newer SDK
 * version stop fitting. toolgate skips these blocks.
 */
export interface AnthropicOtherBlock {
  readonly type: string;
}

/** One content block of an assistant message. Tell tool use apart with `isAnthropicToolUse`. */
export type AnthropicContentBlock = AnthropicToolUseBlock | AnthropicTextBlock | AnthropicOtherBlock;

/**
 * An assistant message, or just its content (`Message` and `Pick<Message, 'content'>` fit). Only
 * `content` is read; `role`, when given, must be the assistant's.
 */
export interface AnthropicMessage {
  readonly role?: 'assistant';
  readonly content: readonly AnthropicContentBlock[];
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages: what toolgate produces
// ---------------------------------------------------------------------------------------------

/** A `tool_result` block answering one `tool_use` (assignable to `ToolResultBlockParam`). */
export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  /** JSON text the model reads. */
  content: string;
  /** Present (true) only for refused and failed calls. */
  is_error?: boolean;
}

/** A user message that carries only tool results (assignable to `UserMessageParam`/`MessageParam`). */
export interface AnthropicToolResultMessage {
  role: 'user';
  content: AnthropicToolResultBlock[];
}

/** A tool's `input_schema`: a JSON Schema whose root is an object. */
export type AnthropicInputSchema = { readonly type: 'object'; readonly [keyword: string]: unknown };

/** A custom tool definition for the request's `tools` (assignable to `Tool` and `ToolUnion`). */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: AnthropicInputSchema;
}

/**
 * A tool definition as a caller may hand it to a check (a `Tool` fits): `description` is optional
 * in the API, and `input_schema` is typed loosely because the check is what inspects it.
 */
export interface AnthropicToolDefinition {
  readonly name: string;
  readonly description?: string;
  readonly input_schema: JsonSchemaObject;
}

/**
 * One assistant response whose tool calls are to be run, tagged with its provider. The tag is
 * explicit rather than sniffed from the shape: both SDKs' types evolve, and a wrong guess would
 * answer a turn in the other provider's format.
 *
 * `response` is what the provider SDK returned: for OpenAI a `ChatCompletion` or its
 * `ChatCompletionMessage`, for Anthropic a `Message` (or just `{ content }`). The types are
 * toolgate's own structural shapes of those (above), so using toolgate
 * does not require either SDK to be installed.
 */
export type ProviderTurn =
  | {
      readonly provider: 'openai';
      readonly response: OpenAIChatCompletion | OpenAIAssistantMessage;
    }
  | { readonly provider: 'anthropic'; readonly response: AnthropicMessage };

/**
 * Tool results in each provider's shape, appended to the conversation after the assistant turn.
 * The messages are assignable to the SDKs' own parameter types (`ChatCompletionToolMessageParam`,
 * Anthropic's `MessageParam`), so they go straight into the next request.
 */
export type ProviderMessages =
  | { readonly provider: 'openai'; readonly messages: OpenAIToolMessage[] }
  | { readonly provider: 'anthropic'; readonly messages: AnthropicToolResultMessage[] };
