import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../../libs/core/types.js';
import { uniqueName } from '../../helpers/names.js';
import { anthropicFixture, openAIFixture } from '../../unit/sdk/sdk-harness.js';
import { createSdkStack, principal, type SdkStack } from './sdk-stack.js';
import { openForSuite } from '../../helpers/stack-lifecycle.js';

describe('toolgate client on Kafka with the real executor', () => {
  let stack: SdkStack;
  openForSuite(async () => (stack = await createSdkStack('sdk_it')));

  it('OpenAI: a 3-call turn, the unparseable call refused and audited, answered as tool messages in order', async () => {
    const client = await stack.client({ replySlot: 2 });
    const response = openAIFixture();
    const taskId = uniqueName('task');
    const outcome = await client.runTurn({ provider: 'openai', response }, { principal, taskId, step: 1 });
    const ids = response.choices[0]!.message.tool_calls!.map((c) => c.id);

    expect(outcome.results.map((r) => [r.callId, r.outcome])).toEqual([
      [ids[0], 'SUCCESS'],
      [ids[1], 'SUCCESS'],
      [ids[2], 'SCHEMA_INVALID'],
    ]);
    expect(outcome.results[0]!.payload).toEqual({ order_id: 'O-5512', status: 'delivered' });
    expect(outcome.messages.map((m) => m.tool_call_id)).toEqual(ids);
    expect(JSON.parse(outcome.messages[2]!.content)).toMatchObject({
      error: { code: 'SCHEMA_INVALID', retryable: true },
    });
    expect(stack.effects.of('reserve_inventory')).toBe(0);
    // The executor audited the refused call, under the key the SDK computed over the raw text.
    const audit = await stack.read('audit', 3);
    const refused = audit.find((a) => a.callId === outcome.calls[2]!.published!.callId)!;
    expect(refused).toMatchObject({
      outcome: 'SCHEMA_INVALID',
      taskId,
      index: 2,
      traceId: outcome.traceId,
      idempotencyKey: outcome.calls[2]!.published!.idempotencyKey,
    });
  });

  it('Anthropic: one call refused for a missing scope never runs; one user message answers all three; a re-run pays nothing twice', async () => {
    const client = await stack.client({ replySlot: 1 });
    const before = {
      refund: stack.effects.of('issue_refund'),
      reserve: stack.effects.of('reserve_inventory'),
    };
    const limited: Principal = { ...principal, scopes: ['orders:read', 'inventory:write'] };
    const ctx = { principal: limited, taskId: uniqueName('task'), step: 0 };
    const response = anthropicFixture();
    const ids = response.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    const outcome = await client.runTurn({ provider: 'anthropic', response }, ctx);

    expect(outcome.results.map((r) => r.outcome)).toEqual(['SUCCESS', 'UNAUTHORIZED', 'SUCCESS']);
    expect(outcome.messages).toHaveLength(1);
    const blocks = outcome.messages[0]!.content as ToolResultBlockParam[];
    expect(blocks.map((b) => [b.tool_use_id, b.is_error ?? false])).toEqual([
      [ids[0], false],
      [ids[1], true],
      [ids[2], false],
    ]);
    expect(stack.effects.of('issue_refund')).toBe(before.refund);
    expect(stack.effects.of('reserve_inventory')).toBe(before.reserve + 1);

    // The same turn again (same task and step): same keys, so the reservation is answered from the
    // idempotency store instead of running again.
    const again = await client.runTurn({ provider: 'anthropic', response: anthropicFixture() }, ctx);
    expect(again.calls.map((c) => c.published!.idempotencyKey)).toEqual(
      outcome.calls.map((c) => c.published!.idempotencyKey),
    );
    expect(again.results[2]).toMatchObject({ outcome: 'DUPLICATE', payload: outcome.results[2]!.payload });
    expect(stack.effects.of('reserve_inventory')).toBe(before.reserve + 1);
  });

  it('two instances with different reply slots each fetch only their own results', async () => {
    const slot0 = uniqueName('slot0');
    const slot1 = uniqueName('slot1');
    const a = await stack.client({ instanceId: slot0, replySlot: 0 });
    const b = await stack.client({ instanceId: slot1, replySlot: 1 });
    const turns = await Promise.all(
      [0, 1, 2].flatMap((step) => [
        a.runTurn(
          { provider: 'anthropic', response: anthropicFixture() },
          { principal, taskId: 'a-task', step },
        ),
        b.runTurn({ provider: 'openai', response: openAIFixture() }, { principal, taskId: 'b-task', step }),
      ]),
    );
    for (const turn of turns) expect(turn.results.every((r) => r.outcome !== 'UNRESOLVED')).toBe(true);

    // Each instance fetched its own 9 results (more only if Kafka redelivered one) and not one
    // message from the other's partition.
    const fromA = stack.fetched.get(slot0)!;
    const fromB = stack.fetched.get(slot1)!;
    expect(new Set(fromA)).toEqual(new Set([0]));
    expect(new Set(fromB)).toEqual(new Set([1]));
    expect(fromA.length).toBeGreaterThanOrEqual(9);
    expect(fromB.length).toBeGreaterThanOrEqual(9);
  });

  it('two instances misconfigured onto one slot both still get their own results (and fetch each other’s in vain)', async () => {
    const first = uniqueName('shared_a');
    const second = uniqueName('shared_b');
    const a = await stack.client({ instanceId: first, replySlot: 2 });
    const b = await stack.client({ instanceId: second, replySlot: 2 });
    const [ra, rb] = await Promise.all([
      a.runTurn(
        { provider: 'anthropic', response: anthropicFixture() },
        { principal, taskId: 'shared-a', step: 0 },
      ),
      b.runTurn(
        { provider: 'anthropic', response: anthropicFixture() },
        { principal, taskId: 'shared-b', step: 0 },
      ),
    ]);
    expect(ra.results.map((r) => r.outcome)).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS']);
    expect(rb.results.map((r) => r.outcome)).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS']);
    expect(ra.results[0]!.idempotencyKey).not.toBe(rb.results[0]!.idempotencyKey);
    // Both read all six results on the shared partition: the cost of a duplicated slot.
    await vi.waitFor(
      () => {
        expect(stack.fetched.get(first)?.length).toBeGreaterThanOrEqual(6);
        expect(stack.fetched.get(second)?.length).toBeGreaterThanOrEqual(6);
      },
      { timeout: 30_000, interval: 50 },
    );
  });
});
