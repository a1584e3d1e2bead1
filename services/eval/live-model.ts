import type { RecordedAnswer } from './eval-data.js';
import type { ToolSpec } from './schema-variants.js';

/** Asks a model for its first tool call on one request. */
export type AskModel = (id: string, request: string, tools: readonly ToolSpec[]) => Promise<RecordedAnswer>;

/** Which provider and model `--live` calls, with its key. */
export interface LiveTarget {
  readonly provider: 'openai' | 'anthropic';
  readonly model: string;
  readonly apiKey: string;
  /** The API's base URL; default the provider's public endpoint. */
  readonly baseURL?: string;
}

const SYSTEM =
  "You are the support assistant of an online store (tenant t1). Answer the user's request by calling the one tool that fits it best, with the arguments the request gives. If no tool fits, answer in text.";

/**
 * A live model client. The provider SDKs are dev dependencies, loaded only here (dynamic import),
 * so nothing else in the eval needs them. OpenAI runs at temperature 0 (this Anthropic SDK takes
 * no temperature and uses the model's default); one request per call, no retries: a
 * failed request rejects and ends the run (a partial eval must not be mistaken for a full one).
 */
export async function liveModel(target: LiveTarget): Promise<AskModel> {
  if (target.provider === 'openai') {
    const { default: OpenAI } = await import('openai');
    const client = new OpenAI({
      apiKey: target.apiKey,
      maxRetries: 0,
      ...(target.baseURL === undefined ? {} : { baseURL: target.baseURL }),
    });
    return async (id, request, tools) => {
      const completion = await client.chat.completions.create({
        model: target.model,
        temperature: 0,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: request },
        ],
        tools: tools.map((t) => ({
          type: 'function' as const,
          function: {
            name: t.name,
            ...(t.description === undefined ? {} : { description: t.description }),
            parameters: t.parameters,
          },
        })),
      });
      const message = completion.choices[0]?.message;
      const call = message?.tool_calls?.find((c) => c.type === 'function');
      if (call === undefined || call.type !== 'function')
        return { id, tool: null, text: message?.content ?? '' };
      return { id, tool: call.function.name, args: parseArgs(call.function.arguments) };
    };
  }
  const { default: Anthropic } = await import('@anthropic-ai/sdk');
  const client = new Anthropic({
    apiKey: target.apiKey,
    maxRetries: 0,
    ...(target.baseURL === undefined ? {} : { baseURL: target.baseURL }),
  });
  return async (id, request, tools) => {
    const message = await client.messages.create({
      model: target.model,
      max_tokens: 512,
      system: SYSTEM,
      messages: [{ role: 'user', content: request }],
      tools: tools.map((t) => ({
        name: t.name,
        ...(t.description === undefined ? {} : { description: t.description }),
        input_schema: t.parameters as { type: 'object'; [k: string]: unknown },
      })),
    });
    const use = message.content.find((b) => b.type === 'tool_use');
    if (use === undefined || use.type !== 'tool_use') {
      const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
      return { id, tool: null, text };
    }
    const input = use.input;
    return {
      id,
      tool: use.name,
      args: typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {},
    };
  };
}

/** Unparseable or non-object arguments score as an empty argument list (every field missing). */
function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
