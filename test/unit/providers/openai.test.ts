import fc from 'fast-check';
import type {
  ChatCompletionMessage,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { ToolCallResult } from '../../../libs/core/types.js';
import {
  callIds,
  normalizeOpenAICalls,
  refusedCallResult,
  toOpenAIToolMessages,
} from '../../../libs/providers/index.js';
import type { NormalizationFailure, NormalizedCall } from '../../../libs/providers/index.js';
import { openAIParallelFixture } from './fixtures.js';

function messageWith(toolCalls: ChatCompletionMessageToolCall[] | undefined): ChatCompletionMessage {
  return { role: 'assistant', content: null, refusal: null, ...(toolCalls ? { tool_calls: toolCalls } : {}) };
}

function fnCall(id: string, name: string, args: string): ChatCompletionMessageToolCall {
  return { id, type: 'function', function: { name, arguments: args } };
}

function failure(entry: NormalizedCall | undefined): NormalizationFailure {
  if (entry === undefined || entry.ok)
    throw new Error(`expected a failure entry, got ${JSON.stringify(entry)}`);
  return entry;
}

describe('normalizeOpenAICalls', () => {
  it('normalizes the 3 parallel calls of a real-shaped response, refusing only the malformed one', () => {
    const calls = normalizeOpenAICalls(openAIParallelFixture());
    expect(calls).toHaveLength(3);
    expect(calls[0]).toEqual({
      ok: true,
      call: {
        id: 'call_Qk3vX9mT2bLr8YwN5sHd1Jp4',
        name: 'get_order_status',
        arguments: { order_id: 'O-5512' },
      },
    });
    expect(calls[1]).toEqual({
      ok: true,
      call: {
        id: 'call_Hf7cR2nW6zAe4UtK9gVm3Xy0',
        name: 'issue_refund',
        arguments: { order_id: 'O-5512', amount: 49.99, currency: 'USD', reason: 'arrived broken' },
      },
    });
    const bad = failure(calls[2]);
    expect(bad.id).toBe('call_Zp1dM8sJ5qGy3OeB7wTc6Lk2');
    expect(bad.name).toBe('reserve_inventory');
    expect(bad.error).toBeInstanceOf(ToolgateError);
    expect(bad.error.code).toBe('SCHEMA_INVALID');
    expect(bad.error.retryable).toBe(true);
    expect(bad.error.message).toMatch(/^arguments are not valid JSON: syntax error at character \d+$/);
    // The argument text itself is not echoed into the error.
    expect(bad.error.message).not.toContain('AMS-2');
  });

  it('accepts the assistant message directly and returns [] without tool calls', () => {
    const message = openAIParallelFixture().choices[0]!.message;
    expect(normalizeOpenAICalls(message)).toHaveLength(3);
    expect(normalizeOpenAICalls(messageWith(undefined))).toEqual([]);
    expect(normalizeOpenAICalls(messageWith([]))).toEqual([]);
    expect(normalizeOpenAICalls({ ...openAIParallelFixture(), choices: [] })).toEqual([]);
  });

  it('reads empty or blank arguments as {}', () => {
    const calls = normalizeOpenAICalls(
      messageWith([fnCall('a', 'list_orders', ''), fnCall('b', 'ping', '  \n')]),
    );
    expect(calls).toEqual([
      { ok: true, call: { id: 'a', name: 'list_orders', arguments: {} } },
      { ok: true, call: { id: 'b', name: 'ping', arguments: {} } },
    ]);
  });

  it('refuses valid JSON that is not an object, per call', () => {
    const calls = normalizeOpenAICalls(
      messageWith([
        fnCall('n', 't', 'null'),
        fnCall('a', 't', '[1,2]'),
        fnCall('s', 't', '"x"'),
        fnCall('k', 't', '{}'),
      ]),
    );
    expect(failure(calls[0]).error.message).toBe('arguments must be a JSON object, got null');
    expect(failure(calls[1]).error.message).toBe('arguments must be a JSON object, got an array');
    expect(failure(calls[2]).error.message).toBe('arguments must be a JSON object, got a string');
    expect(calls[3]).toEqual({ ok: true, call: { id: 'k', name: 't', arguments: {} } });
  });

  it('says when the JSON was cut off', () => {
    const calls = normalizeOpenAICalls(messageWith([fnCall('c', 'issue_refund', '{"order_id":"O-55')]));
    expect(failure(calls[0]).error.message).toBe(
      'arguments are not valid JSON: the text ends before the JSON is complete',
    );
  });

  it('refuses custom free-text tool calls per call', () => {
    const custom: ChatCompletionMessageToolCall = {
      id: 'x',
      type: 'custom',
      custom: { name: 'grep', input: 'foo' },
    };
    const calls = normalizeOpenAICalls(messageWith([custom, fnCall('y', 'ping', '{}')]));
    expect(failure(calls[0])).toMatchObject({ id: 'x', name: 'grep', error: { code: 'SCHEMA_INVALID' } });
    expect(calls[1]?.ok).toBe(true);
  });

  it('never throws and answers every call id, whatever the arguments text (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string(),
            fc.json(),
            fc.jsonValue().map((v) => JSON.stringify(v)),
          ),
          { maxLength: 6 },
        ),
        (texts) => {
          const toolCalls = texts.map((t, i) => fnCall(`call_${i}`, `tool_${i}`, t));
          const calls = normalizeOpenAICalls(messageWith(toolCalls));
          expect(callIds(calls)).toEqual(toolCalls.map((c) => c.id));
          calls.forEach((entry, i) => {
            const text = texts[i]!;
            let parsed: unknown;
            try {
              parsed = text.trim() === '' ? {} : JSON.parse(text);
            } catch {
              parsed = undefined;
            }
            const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
            expect(entry.ok).toBe(isObject);
            if (entry.ok) expect(entry.call.arguments).toEqual(parsed);
            else expect(entry.error.code).toBe('SCHEMA_INVALID');
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('OpenAI round trip', () => {
  it('answers 3 parallel calls (one malformed, one unresolved) with one tool message per id, in call order', () => {
    const completion = openAIParallelFixture();
    const calls = normalizeOpenAICalls(completion);
    const ids = callIds(calls);

    // What the executor would send back, arriving in a different order than requested.
    const results: ToolCallResult[] = [];
    for (const entry of calls) {
      if (!entry.ok) {
        results.push(refusedCallResult(entry));
        continue;
      }
      if (entry.call.name === 'get_order_status') {
        results.push({
          callId: entry.call.id,
          tool: entry.call.name,
          outcome: 'SUCCESS',
          payload: { order_id: 'O-5512', status: 'delivered', total: 49.99 },
          toolInvocations: 1,
        });
      } else {
        results.push({
          callId: entry.call.id,
          tool: entry.call.name,
          outcome: 'UNRESOLVED',
          error: { code: 'UNRESOLVED', message: 'payment service timed out', retryable: false },
          toolInvocations: 1,
        });
      }
    }
    const messages = toOpenAIToolMessages(ids, [...results].reverse());

    expect(messages.map((m) => m.tool_call_id)).toEqual(
      completion.choices[0]!.message.tool_calls!.map((c) => c.id),
    );
    expect(messages.every((m) => m.role === 'tool')).toBe(true);
    const bodies = messages.map((m) => JSON.parse(m.content) as Record<string, unknown>);
    expect(bodies[0]).toEqual({ order_id: 'O-5512', status: 'delivered', total: 49.99 });
    expect(bodies[1]).toMatchObject({ status: 'outcome_unknown', code: 'UNRESOLVED', retryable: false });
    expect(bodies[1]).not.toHaveProperty('error');
    expect(bodies[2]).toEqual({
      error: {
        code: 'SCHEMA_INVALID',
        message: expect.stringMatching(/^arguments are not valid JSON/) as unknown,
        retryable: true,
        suggested_fix: expect.any(String) as unknown,
      },
    });

    // The next request is well typed: assistant turn, then the tool messages.
    const next: ChatCompletionMessageParam[] = [completion.choices[0]!.message, ...messages];
    expect(next).toHaveLength(4);
  });

  it('refuses to build messages when a call would go unanswered or be answered twice', () => {
    const calls = normalizeOpenAICalls(openAIParallelFixture());
    const ids = callIds(calls);
    const one = (callId: string): ToolCallResult => ({
      callId,
      tool: 't',
      outcome: 'SUCCESS',
      toolInvocations: 1,
    });
    expect(() => toOpenAIToolMessages(ids, [one(ids[0]!), one(ids[1]!)])).toThrow(
      `missing results for "${ids[2]}"`,
    );
    expect(() => toOpenAIToolMessages(ids, [...ids.map(one), one(ids[0]!)])).toThrow(
      `more than one result for "${ids[0]}"`,
    );
  });
});
