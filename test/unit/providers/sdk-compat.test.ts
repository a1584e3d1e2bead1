/**
 * toolgate declares its own provider shapes (libs/providers/provider-shapes.ts) so that its public
 * types do not name the optional `openai` and `@anthropic-ai/sdk` packages. This file pins those
 * shapes to the real SDK types, which are installed here as development dependencies:
 *
 * - what the SDKs return fits what toolgate accepts,
 * - what toolgate produces fits what the SDKs' create calls accept,
 * - a wrongly shaped response does not type-check.
 *
 * The checks are compile-time: `npx tsc -p tsconfig.json --noEmit` (tsconfig.json includes test/)
 * fails when one breaks, including when a `@ts-expect-error` line stops being an error. The runtime
 * test at the end builds real request bodies from toolgate's output and reads them back.
 */
import type {
  ContentBlock,
  Message,
  MessageCreateParamsNonStreaming,
  MessageParam,
  Tool,
  ToolResultBlockParam,
  ToolUnion,
  UserMessageParam,
} from '@anthropic-ai/sdk/resources/messages';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessage,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ToolCallResult } from '../../../libs/core/types.js';
import {
  callIds,
  normalizeAnthropicCalls,
  normalizeOpenAICalls,
  toAnthropicToolResultMessage,
  toOpenAIToolMessages,
} from '../../../libs/providers/index.js';
import type {
  AnthropicMessage,
  AnthropicTool,
  AnthropicToolDefinition,
  AnthropicToolResultBlock,
  AnthropicToolResultMessage,
  OpenAIAssistantMessage,
  OpenAIChatCompletion,
  OpenAIFunctionTool,
  OpenAIToolDefinition,
  OpenAIToolMessage,
} from '../../../libs/providers/index.js';
import { checkAnthropicTool, checkOpenAIStrictTool } from '../../../libs/registry/provider-rules.js';
import { toAnthropicTools } from '../../../libs/registry/export-anthropic.js';
import { toOpenAITools } from '../../../libs/registry/export-openai.js';
import type { TurnContext } from '../../../services/sdk/client-options.js';
import type { ProviderMessages, ProviderTurn } from '../../../libs/providers/provider-shapes.js';
import type { ToolgateClient } from '../../../services/sdk/toolgate-client.js';
import { latestSampleTools } from '../registry/sample-tools.js';
import { anthropicParallelFixture, openAIParallelFixture } from './fixtures.js';

type OpenAIMessages = Extract<ProviderMessages, { provider: 'openai' }>['messages'];
type AnthropicMessages = Extract<ProviderMessages, { provider: 'anthropic' }>['messages'];

/**
 * Calls of `runTurn` that must not compile. Never run (it only has to type-check); each
 * `@ts-expect-error` fails the type check if the line after it is accepted.
 */
function wronglyShapedTurns(client: ToolgateClient, ctx: TurnContext, completion: ChatCompletion): void {
  // @ts-expect-error Anthropic content must be an array of blocks, not a number.
  void client.runTurn({ provider: 'anthropic', response: { content: 42 } }, ctx);
  // @ts-expect-error ... nor a string.
  void client.runTurn({ provider: 'anthropic', response: { content: 'call the tool' } }, ctx);
  // @ts-expect-error A user message is not an assistant turn.
  void client.runTurn({ provider: 'anthropic', response: { role: 'user', content: [] } }, ctx);
  // @ts-expect-error An OpenAI completion answered as Anthropic: it has no `content`.
  void client.runTurn({ provider: 'anthropic', response: completion }, ctx);
  // Not literals, so the errors below are the missing fields, not excess ones.
  const call = { id: 'c1', type: 'function' as const };
  const noChoices = { id: 'c1', object: 'chat.completion' as const, created: 0, model: 'gpt-test' };
  // @ts-expect-error An OpenAI completion without `choices` (and not a message either).
  void client.runTurn({ provider: 'openai', response: noChoices }, ctx);
  const noMessage = { choices: [{ index: 0, finish_reason: 'stop' as const }] };
  // @ts-expect-error A choice without its message.
  void client.runTurn({ provider: 'openai', response: noMessage }, ctx);
  const argsAsObject = {
    role: 'assistant' as const,
    tool_calls: [{ ...call, function: { name: 'x', arguments: {} } }],
  };
  // @ts-expect-error Function arguments arrive as JSON text, not as an object.
  void client.runTurn({ provider: 'openai', response: argsAsObject }, ctx);
  const unnamed = { role: 'assistant' as const, tool_calls: [{ ...call, function: { arguments: '{}' } }] };
  // @ts-expect-error A function call without a name.
  void client.runTurn({ provider: 'openai', response: unnamed }, ctx);
}

/** An Anthropic `Message` passed where an OpenAI response is expected. Never run. */
function anthropicAnsweredAsOpenAI(client: ToolgateClient, ctx: TurnContext, message: Message): void {
  // @ts-expect-error Its `content` is an array of blocks, not the string an OpenAI message carries.
  void client.runTurn({ provider: 'openai', response: message }, ctx);
}

/** The SDKs' responses passed the way the README shows. Never run; it only has to type-check. */
function sdkResponsesAccepted(
  client: ToolgateClient,
  ctx: TurnContext,
  completion: ChatCompletion,
  message: Message,
): void {
  void client.runTurn({ provider: 'openai', response: completion }, ctx);
  void client.runTurn({ provider: 'openai', response: completion.choices[0]!.message }, ctx);
  void client.runTurn({ provider: 'anthropic', response: message }, ctx);
  // Written out in full as literals, with fields toolgate does not read.
  void client.runTurn(
    {
      provider: 'openai',
      response: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 0,
        model: 'gpt-test',
        choices: [
          {
            index: 0,
            finish_reason: 'tool_calls',
            logprobs: null,
            message: {
              role: 'assistant',
              content: null,
              refusal: null,
              tool_calls: [
                { id: 'c1', type: 'function', function: { name: 'lookup_order', arguments: '{}' } },
              ],
            },
          },
        ],
      },
    },
    ctx,
  );
  void client.runTurn(
    {
      provider: 'anthropic',
      response: {
        id: 'msg_1',
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking it up.', citations: null },
          { type: 'tool_use', id: 'toolu_1', name: 'lookup_order', input: {}, caller: { type: 'direct' } },
        ],
      },
    },
    ctx,
  );
}

describe('provider shapes against the real SDK types', () => {
  it('accepts what the SDKs return', () => {
    expectTypeOf<ChatCompletion>().toExtend<OpenAIChatCompletion>();
    expectTypeOf<ChatCompletionMessage>().toExtend<OpenAIAssistantMessage>();
    expectTypeOf<Message>().toExtend<AnthropicMessage>();
    expectTypeOf<Pick<Message, 'content'>>().toExtend<AnthropicMessage>();
    expectTypeOf<ContentBlock[]>().toExtend<AnthropicMessage['content']>();

    expectTypeOf<{ provider: 'openai'; response: ChatCompletion }>().toExtend<ProviderTurn>();
    expectTypeOf<{ provider: 'openai'; response: ChatCompletionMessage }>().toExtend<ProviderTurn>();
    expectTypeOf<{ provider: 'anthropic'; response: Message }>().toExtend<ProviderTurn>();
    expectTypeOf(normalizeOpenAICalls).toBeCallableWith(openAIParallelFixture());
    expectTypeOf(normalizeAnthropicCalls).toBeCallableWith(anthropicParallelFixture());
    expectTypeOf(sdkResponsesAccepted).toBeFunction();

    // The checks take the SDKs' own tool definitions too.
    expectTypeOf<ChatCompletionTool>().toExtend<OpenAIToolDefinition>();
    expectTypeOf<Tool>().toExtend<AnthropicToolDefinition>();
  });

  it('produces what the SDKs accept', () => {
    expectTypeOf<OpenAIToolMessage>().toExtend<ChatCompletionToolMessageParam>();
    expectTypeOf<OpenAIMessages>().toExtend<ChatCompletionMessageParam[]>();
    expectTypeOf<ReturnType<typeof toOpenAIToolMessages>>().toExtend<ChatCompletionToolMessageParam[]>();
    expectTypeOf<OpenAIFunctionTool>().toExtend<ChatCompletionFunctionTool>();
    expectTypeOf<ReturnType<typeof toOpenAITools>>().toExtend<ChatCompletionTool[]>();

    expectTypeOf<AnthropicToolResultBlock>().toExtend<ToolResultBlockParam>();
    expectTypeOf<AnthropicToolResultMessage>().toExtend<UserMessageParam>();
    expectTypeOf<AnthropicMessages>().toExtend<MessageParam[]>();
    expectTypeOf<AnthropicTool>().toExtend<Tool>();
    expectTypeOf<ReturnType<typeof toAnthropicTools>>().toExtend<ToolUnion[]>();
  });

  it('refuses wrongly shaped responses (the @ts-expect-error lines above)', () => {
    expectTypeOf(wronglyShapedTurns).toBeFunction();
    expectTypeOf(anthropicAnsweredAsOpenAI).toBeFunction();
    expectTypeOf<{ content: number }>().not.toExtend<AnthropicMessage>();
    expectTypeOf<{ id: string; object: 'chat.completion' }>().not.toExtend<OpenAIChatCompletion>();
    expectTypeOf<{ id: string; object: 'chat.completion' }>().not.toExtend<OpenAIAssistantMessage>();
  });
});

describe('request bodies built from toolgate output', () => {
  const success = (callId: string, tool: string): ToolCallResult => ({
    callId,
    tool,
    outcome: 'SUCCESS',
    payload: { ok: true, callId },
    toolInvocations: 1,
  });

  it('OpenAI: exported tools and tool messages go into the next create call unchanged', () => {
    const completion = openAIParallelFixture();
    const assistant = completion.choices[0]!.message;
    const calls = normalizeOpenAICalls(completion);
    const ids = callIds(calls);
    const tools = toOpenAITools(latestSampleTools(), { strict: true });
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: 'gpt-test',
      tools,
      messages: [
        { role: 'user', content: 'refund my broken order' },
        assistant,
        ...toOpenAIToolMessages(
          ids,
          ids.map((id, i) => success(id, `tool_${i}`)),
        ),
      ],
    };
    expect(ids).toHaveLength(3);
    expect(body.messages.slice(2)).toEqual(
      ids.map((id) => ({
        role: 'tool',
        tool_call_id: id,
        content: JSON.stringify({ ok: true, callId: id }),
      })),
    );
    expect(body.tools?.map((t) => (t.type === 'function' ? t.function.name : t.custom.name))).toEqual(
      latestSampleTools().map((t) => t.name),
    );
    expect(tools.flatMap((t) => checkOpenAIStrictTool(t))).toEqual([]);
  });

  it('Anthropic: exported tools and the tool-result message go into the next create call unchanged', () => {
    const message = anthropicParallelFixture();
    const ids = callIds(normalizeAnthropicCalls(message));
    const tools = toAnthropicTools(latestSampleTools());
    const answer = toAnthropicToolResultMessage(
      ids,
      ids.map((id, i) => success(id, `tool_${i}`)),
    );
    const body: MessageCreateParamsNonStreaming = {
      model: 'claude-test',
      max_tokens: 256,
      tools,
      messages: [
        { role: 'user', content: 'refund my broken order' },
        { role: message.role, content: message.content },
        answer,
      ],
    };
    expect(ids).toHaveLength(3);
    expect(body.messages[2]).toEqual({
      role: 'user',
      content: ids.map((id) => ({
        type: 'tool_result',
        tool_use_id: id,
        content: JSON.stringify({ ok: true, callId: id }),
      })),
    });
    expect(body.tools?.map((t) => ('name' in t ? t.name : t))).toEqual(
      latestSampleTools().map((t) => t.name),
    );
    expect(tools.flatMap((t) => checkAnthropicTool(t))).toEqual([]);
  });
});
