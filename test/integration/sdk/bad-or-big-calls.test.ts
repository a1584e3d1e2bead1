import { ConfigResourceTypes } from 'kafkajs';
import type { ChatCompletionMessage } from 'openai/resources/chat/completions';
import { beforeAll, describe, expect, it } from 'vitest';
import { CALL_LIMITS } from '../../../services/sdk/index.js';
import { createTestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { openForSuite } from '../../helpers/stack-lifecycle.js';
import { createSdkStack, principal, type SdkStack } from './sdk-stack.js';

/** An OpenAI assistant message calling the given tools with the given raw argument texts. */
function openAITurn(calls: ReadonlyArray<{ name: string; arguments: string }>): ChatCompletionMessage {
  return {
    role: 'assistant',
    content: null,
    refusal: null,
    tool_calls: calls.map((c, i) => ({
      id: `call_${i}`,
      type: 'function' as const,
      function: { name: c.name, arguments: c.arguments },
    })),
  };
}

function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

const goodLookup = { name: 'get_order_status', arguments: '{"order_id":"O-5512"}' };

describe('one bad or big call does not sink its turn (SDK on Kafka with the real executor)', () => {
  let stack: SdkStack;
  openForSuite(async () => (stack = await createSdkStack('sdk_big')));

  const run = async (calls: ReadonlyArray<{ name: string; arguments: string }>) => {
    const client = await stack.client({ replySlot: 0 });
    return client.runTurn(
      { provider: 'openai', response: openAITurn(calls) },
      { principal, taskId: uniqueName('task'), step: 0 },
    );
  };

  it('a 5 MB call is refused alone, before publishing; the good call beside it runs', async () => {
    const before = stack.effects.of('get_order_status');
    const huge = JSON.stringify({
      order_id: 'O-1',
      amount: 5,
      currency: 'USD',
      reason: 'x'.repeat(5 * 1024 * 1024),
    });
    const outcome = await run([goodLookup, { name: 'issue_refund', arguments: huge }]);

    expect(outcome.results.map((r) => r.outcome)).toEqual(['SUCCESS', 'SCHEMA_INVALID']);
    const refused = outcome.results[1]!;
    expect(refused.error).toMatchObject({ code: 'SCHEMA_INVALID', retryable: true });
    expect(refused.error!.message).toContain(String(CALL_LIMITS.maxCallEventBytes));
    expect(refused.toolInvocations).toBe(0);
    // Decided before publishing: nothing was sent for it, so no dead letter or case can follow.
    expect(outcome.calls[1]!.published).toBeUndefined();
    expect(stack.effects.of('get_order_status')).toBe(before + 1);
    expect(stack.effects.of('issue_refund')).toBe(0);
  });

  it('a turn of 50 calls of ~41 KB each (2 MB together) is published in pieces and every call runs', async () => {
    const before = stack.effects.of('get_order_status');
    const calls = Array.from({ length: 50 }, (_, i) => ({
      name: 'get_order_status',
      arguments: JSON.stringify({ order_id: `O-${i}-${'y'.repeat(41 * 1024)}` }),
    }));
    const outcome = await run(calls);

    expect(outcome.results.map((r) => r.outcome)).toEqual(calls.map(() => 'SUCCESS'));
    expect(stack.effects.of('get_order_status')).toBe(before + 50);
  });

  it('arguments nested deeper than the canonical-JSON limit are refused for that call only', async () => {
    const before = stack.effects.of('get_order_status');
    const outcome = await run([
      { name: 'get_order_status', arguments: `{"order_id":"O-1","filter":${nested(300)}}` },
      goodLookup,
    ]);

    expect(outcome.results.map((r) => r.outcome)).toEqual(['SCHEMA_INVALID', 'SUCCESS']);
    expect(outcome.results[0]!.error).toMatchObject({ code: 'SCHEMA_INVALID', retryable: true });
    expect(outcome.results[0]!.error!.message).toMatch(/nesting deeper than 256/);
    expect(outcome.calls[0]!.published).toBeUndefined();
    expect(stack.effects.of('get_order_status')).toBe(before + 1);
  });

  it('a number outside the JSON range (1e400) is refused for that call only', async () => {
    const before = stack.effects.of('get_order_status');
    const outcome = await run([
      goodLookup,
      { name: 'get_order_status', arguments: '{"order_id":"O-2","limit":1e400}' },
    ]);

    expect(outcome.results.map((r) => r.outcome)).toEqual(['SUCCESS', 'SCHEMA_INVALID']);
    expect(outcome.results[1]!.error).toMatchObject({ code: 'SCHEMA_INVALID', retryable: true });
    expect(outcome.results[1]!.error!.message).toMatch(/Infinity/);
    expect(outcome.results.some((r) => r.outcome === 'UNRESOLVED')).toBe(false);
    expect(stack.effects.of('get_order_status')).toBe(before + 1);
  });
});

describe('a broker whose limit is below the SDK limits (calls topic max.message.bytes = 200000)', () => {
  let stack: SdkStack;
  openForSuite(async () => (stack = await createSdkStack('sdk_small_broker')));
  beforeAll(async () => {
    const kafka = createTestKafka('sdk_small_broker_admin');
    const admin = await kafka.admin();
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: stack.topics.calls,
          configEntries: [{ name: 'max.message.bytes', value: '200000' }],
        },
      ],
    });
    await kafka.close();
  });

  it('a call the broker refuses as too large is refused alone; the calls it shared a batch with still run', async () => {
    const client = await stack.client({ replySlot: 1 });
    const lookup = (i: number, padding: number) => ({
      name: 'get_order_status',
      arguments: JSON.stringify({ order_id: `O-${i}-${'p'.repeat(padding)}` }),
    });
    const before = stack.effects.of('get_order_status');
    // One partition (task key): 150 KB + 150 KB share a 512 KiB publish the broker refuses whole.
    const outcome = await client.runTurn(
      {
        provider: 'openai',
        response: openAITurn([lookup(0, 150_000), lookup(1, 150_000), lookup(2, 300_000), goodLookup]),
      },
      { principal, taskId: uniqueName('task'), step: 0 },
      { timeoutMs: 20_000 },
    );

    expect(outcome.results.map((r) => r.outcome)).toEqual([
      'SUCCESS',
      'SUCCESS',
      'SCHEMA_INVALID',
      'SUCCESS',
    ]);
    expect(outcome.results[2]!.error).toMatchObject({ code: 'SCHEMA_INVALID', retryable: true });
    expect(outcome.results[2]!.error!.message).toMatch(/above what the broker accepts/);
    expect(outcome.calls[2]!.published).toBeUndefined();
    expect(stack.effects.of('get_order_status')).toBe(before + 3);
  });
});
