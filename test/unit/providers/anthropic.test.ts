import type { ContentBlock, Message, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ToolCallResult } from '../../../libs/core/types.js';
import {
  callIds,
  normalizeAnthropicCalls,
  refusedCallResult,
  toAnthropicToolResultMessage,
} from '../../../libs/providers/index.js';
import { anthropicParallelFixture } from './fixtures.js';

function toolUse(id: string, name: string, input: unknown): ContentBlock {
  return { type: 'tool_use', id, name, input, caller: { type: 'direct' } };
}

function withContent(content: ContentBlock[]): Pick<Message, 'content'> {
  return { content };
}

describe('normalizeAnthropicCalls', () => {
  it('normalizes the 3 tool_use blocks of a real-shaped response and skips the text block', () => {
    const calls = normalizeAnthropicCalls(anthropicParallelFixture());
    expect(calls).toEqual([
      {
        ok: true,
        call: {
          id: 'toolu_01A09q90qw90lq917835lq9',
          name: 'get_order_status',
          arguments: { order_id: 'O-5512' },
        },
      },
      {
        ok: true,
        call: {
          id: 'toolu_01Bq2RrT4yWvX8zN3kP6mJ5s',
          name: 'issue_refund',
          arguments: { order_id: 'O-5512', amount: 49.99, currency: 'USD', reason: 'arrived broken' },
        },
      },
      {
        ok: true,
        call: {
          id: 'toolu_01CzL7hG9eD2fQ4aS8vB1nW3',
          name: 'reserve_inventory',
          arguments: { sku: 'SKU-7', quantity: 1, warehouse: 'AMS-2' },
        },
      },
    ]);
  });

  it('skips server-side tool use, which Anthropic runs itself', () => {
    const calls = normalizeAnthropicCalls(
      withContent([
        {
          type: 'server_tool_use',
          id: 'srvtoolu_1',
          name: 'web_search',
          input: { query: 'x' },
          caller: { type: 'direct' },
        },
        toolUse('toolu_1', 'ping', {}),
      ]),
    );
    expect(callIds(calls)).toEqual(['toolu_1']);
  });

  it('refuses non-object input per call, keeping the other calls', () => {
    const calls = normalizeAnthropicCalls(
      withContent([
        toolUse('a', 't', null),
        toolUse('b', 't', ['x']),
        toolUse('c', 't', 'str'),
        toolUse('d', 't', {}),
      ]),
    );
    expect(calls.map((c) => (c.ok ? 'ok' : c.error.message))).toEqual([
      'input must be a JSON object, got null',
      'input must be a JSON object, got an array',
      'input must be a JSON object, got a string',
      'ok',
    ]);
    expect(calls.filter((c) => !c.ok).every((c) => !c.ok && c.error.code === 'SCHEMA_INVALID')).toBe(true);
  });

  it('returns one entry per tool_use whatever the input (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 6 }), (inputs) => {
        const blocks = inputs.map((input, i) => toolUse(`toolu_${i}`, 't', input));
        const calls = normalizeAnthropicCalls(withContent(blocks));
        expect(callIds(calls)).toEqual(blocks.map((_, i) => `toolu_${i}`));
        calls.forEach((c, i) => {
          const input = inputs[i];
          expect(c.ok).toBe(typeof input === 'object' && input !== null && !Array.isArray(input));
        });
      }),
    );
  });
});

describe('Anthropic round trip', () => {
  it('answers 3 parallel tool_use blocks (one failing, one unresolved) in ONE user message', () => {
    const response = anthropicParallelFixture();
    const calls = normalizeAnthropicCalls(response);
    const [order, refund, reserve] = calls.map((c) => {
      if (!c.ok) throw new Error('fixture calls are all well formed');
      return c.call;
    });
    const results: ToolCallResult[] = [
      {
        callId: reserve!.id,
        tool: reserve!.name,
        outcome: 'EXECUTION_ERROR',
        error: {
          code: 'SERVER_ERROR',
          message: 'The downstream service failed. Changing the arguments will not help.',
          retryable: true,
          retryAfterMs: 2000,
        },
        toolInvocations: 3,
      },
      {
        callId: order!.id,
        tool: order!.name,
        outcome: 'SUCCESS',
        payload: { order_id: 'O-5512', status: 'delivered' },
        toolInvocations: 1,
      },
      {
        callId: refund!.id,
        tool: refund!.name,
        outcome: 'UNRESOLVED',
        error: { code: 'UNRESOLVED', message: 'timed out', retryable: false },
        toolInvocations: 1,
      },
    ];

    const message = toAnthropicToolResultMessage(callIds(calls), results);

    expect(message.role).toBe('user');
    expect(message.content.map((b) => b.tool_use_id)).toEqual([
      'toolu_01A09q90qw90lq917835lq9',
      'toolu_01Bq2RrT4yWvX8zN3kP6mJ5s',
      'toolu_01CzL7hG9eD2fQ4aS8vB1nW3',
    ]);
    expect(message.content.every((b) => b.type === 'tool_result')).toBe(true);
    const [okBlock, unresolvedBlock, failedBlock] = message.content;
    expect(okBlock!.is_error).toBeUndefined();
    expect(JSON.parse(okBlock!.content)).toEqual({ order_id: 'O-5512', status: 'delivered' });
    // Unknown is not failed: no error flag, no error object, an explicit "do not call it again".
    expect(unresolvedBlock!.is_error).toBeUndefined();
    const unresolved = JSON.parse(unresolvedBlock!.content) as Record<string, unknown>;
    expect(unresolved).not.toHaveProperty('error');
    expect(unresolved.status).toBe('outcome_unknown');
    expect(unresolved.message).toContain('Do not call it again');
    expect(failedBlock!.is_error).toBe(true);
    expect(JSON.parse(failedBlock!.content)).toEqual({
      error: {
        code: 'SERVER_ERROR',
        message: 'The downstream service failed. Changing the arguments will not help.',
        retryable: true,
        retry_after_ms: 2000,
      },
    });

    // The next request is well typed: assistant turn, then the one user message of results.
    const next: MessageParam[] = [{ role: 'assistant', content: response.content }, message];
    expect(next).toHaveLength(2);
  });

  it('answers a refused call with is_error and SCHEMA_INVALID', () => {
    const calls = normalizeAnthropicCalls(withContent([toolUse('toolu_bad', 'issue_refund', ['O-1'])]));
    const entry = calls[0]!;
    if (entry.ok) throw new Error('expected refusal');
    const message = toAnthropicToolResultMessage(callIds(calls), [refusedCallResult(entry)]);
    expect(message.content[0]).toMatchObject({ tool_use_id: 'toolu_bad', is_error: true });
    expect(JSON.parse(message.content[0]!.content)).toMatchObject({
      error: { code: 'SCHEMA_INVALID', retryable: true },
    });
  });

  it('refuses to build a message with an extra result', () => {
    const ids = callIds(normalizeAnthropicCalls(anthropicParallelFixture()));
    const results = [...ids, 'toolu_stranger'].map((callId): ToolCallResult => ({
      callId,
      tool: 't',
      outcome: 'SUCCESS',
      toolInvocations: 1,
    }));
    expect(() => toAnthropicToolResultMessage(ids, results)).toThrow(
      'results for unrequested calls "toolu_stranger"',
    );
  });
});
