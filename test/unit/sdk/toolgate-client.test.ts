import { decodeProtectedHeader, decodeJwt } from 'jose';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { partitionForKey } from '../../../libs/bus/partitioner.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import { idempotencyKey } from '../../../libs/core/idempotency-key.js';
import type { ToolCallRequestedEvent } from '../../../libs/events/contracts.js';
import {
  AUDIENCE,
  ISSUER,
  anthropicFixture,
  createSdkHarness,
  openAIFixture,
  principal,
  type SdkHarness,
} from './sdk-harness.js';
import { fixtureTools, registryOf } from './test-tools.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('toolgate client: what it publishes', () => {
  let h: SdkHarness;
  beforeEach(async () => {
    h = await createSdkHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  const published = async (): Promise<ToolCallRequestedEvent[]> =>
    Promise.all(
      h.publisher.calls
        .filter((c) => c.topic === h.topics.calls)
        .flatMap((c) => c.messages)
        .map((m) => h.codec.decode('calls', m.value)),
    );

  it('publishes the whole turn in one publish: unique call ids, keys from the coordinates, signed principal, reply address, traceparent', async () => {
    const client = await h.client({ replySlot: 2, tools: registryOf(fixtureTools()) });
    const response = openAIFixture();
    await client.runTurn(
      { provider: 'openai', response },
      { principal, taskId: 'task-1', step: 3, traceId: TRACE },
    );

    const publishes = h.publisher.calls.filter((c) => c.topic === h.topics.calls);
    expect(publishes).toHaveLength(1);
    expect(publishes[0]!.messages).toHaveLength(3);
    const events = await published();
    const toolCalls = response.choices[0]!.message.tool_calls!.map(
      (c) => (c.type === 'function' ? c.function : undefined)!,
    );
    expect(events.map((e) => e.providerCallId)).toEqual(
      response.choices[0]!.message.tool_calls!.map((c) => c.id),
    );
    expect(new Set(events.map((e) => e.callId)).size).toBe(3);
    for (const [i, event] of events.entries()) {
      expect(event.callId).toMatch(UUID);
      expect(event).toMatchObject({
        tenant: 't1',
        taskId: 'task-1',
        step: 3,
        index: i,
        tool: toolCalls[i]!.name,
        traceId: TRACE,
        replyTopic: h.topics.results,
        replyPartition: 2,
        toolVersion: null,
      });
      expect(event.deadlineMs).toBeGreaterThan(event.requestedAtMs);
      const header = publishes[0]!.messages[i]!.headers!.traceparent!;
      expect(header).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    }
    // Parsed arguments are keyed over their value; the unparseable third over the raw text.
    const coords = (index: number) => ({ tenant: 't1', taskId: 'task-1', step: 3, index });
    expect(events[0]!.idempotencyKey).toBe(
      idempotencyKey(coords(0), 'get_order_status', { order_id: 'O-5512' }),
    );
    expect(events[1]!.idempotencyKey).toBe(
      idempotencyKey(coords(1), 'issue_refund', JSON.parse(toolCalls[1]!.arguments)),
    );
    expect(events[2]!.argumentsJson).toBe(toolCalls[2]!.arguments);
    expect(events[2]!.idempotencyKey).toBe(
      idempotencyKey(coords(2), 'reserve_inventory', toolCalls[2]!.arguments),
    );

    // The assertion is the only credential: it verifies to the principal and is short-lived.
    expect(new Set(events.map((e) => e.principalAssertion)).size).toBe(1);
    expect(await h.verifier.verify(events[0]!.principalAssertion)).toEqual(principal);
    const claims = decodeJwt(events[0]!.principalAssertion);
    expect(claims.exp! - claims.iat!).toBe(120);
    expect(claims).toMatchObject({ iss: ISSUER, aud: AUDIENCE });
    expect(decodeProtectedHeader(events[0]!.principalAssertion).kid).toBe('k1');
  });

  it('keys each call by its conflict key, falling back to the task when there is none or the arguments do not validate', async () => {
    const client = await h.client({ tools: registryOf(fixtureTools()) });
    await client.runTurn(
      { provider: 'anthropic', response: anthropicFixture() },
      { principal, taskId: 'task-9', step: 0 },
    );
    const response = openAIFixture();
    await client.runTurn({ provider: 'openai', response }, { principal, taskId: 'task-9', step: 1 });
    const invalid = structuredClone(response);
    invalid.choices[0]!.message.tool_calls = [
      {
        id: 'c1',
        type: 'function',
        function: {
          name: 'reserve_inventory',
          arguments: '{"sku":"SKU-7","quantity":"one","warehouse":"AMS-2"}',
        },
      },
      { id: 'c2', type: 'function', function: { name: 'no_such_tool', arguments: '{"sku":"SKU-7"}' } },
    ];
    await client.runTurn({ provider: 'openai', response: invalid }, { principal, taskId: 'task-9', step: 2 });

    const messages = h.publisher.calls.filter((c) => c.topic === h.topics.calls).flatMap((c) => c.messages);
    expect(messages.map((m) => m.key)).toEqual([
      't1:task:task-9', // get_order_status declares no conflict key
      't1:order:O-5512',
      't1:inventory:SKU-7',
      't1:task:task-9',
      't1:order:O-5512',
      't1:task:task-9', // unparseable arguments: no validated value to take a conflict key from
      't1:task:task-9', // quantity fails validation
      't1:task:task-9', // unknown tool
    ]);
    expect((await published()).map((e) => e.resourceKey)).toEqual(messages.map((m) => m.key));
    // The key picks the partition: same resource, same partition, so the executor serializes them.
    const refunds = h.executor.received.filter((c) => c.event.tool === 'issue_refund');
    expect(refunds.map((c) => c.message.partition)).toEqual([
      partitionForKey('t1:order:O-5512', 4),
      partitionForKey('t1:order:O-5512', 4),
    ]);
  });

  it('without a registry, keys every call by its task', async () => {
    const client = await h.client();
    await client.runTurn(
      { provider: 'anthropic', response: anthropicFixture() },
      { principal, taskId: 'task-2', step: 0 },
    );
    expect((await published()).map((e) => e.resourceKey)).toEqual(Array(3).fill('t1:task:task-2'));
  });

  it('reuses every idempotency and resource key when the same turn runs again, with fresh call ids', async () => {
    const client = await h.client({ tools: registryOf(fixtureTools()) });
    const ctx = { principal, taskId: 'task-3', step: 4 };
    const first = await client.runTurn({ provider: 'anthropic', response: anthropicFixture() }, ctx);
    const again = await client.runTurn({ provider: 'anthropic', response: anthropicFixture() }, ctx);
    const keysOf = (o: typeof first) =>
      o.calls.map((c) => [c.published!.idempotencyKey, c.published!.resourceKey]);
    expect(keysOf(again)).toEqual(keysOf(first));
    const ids = [...first.calls, ...again.calls].map((c) => c.published!.callId);
    expect(new Set(ids).size).toBe(6);
    // The next step of the same task makes new keys: it is a different call.
    const next = await client.runTurn(
      { provider: 'anthropic', response: anthropicFixture() },
      { ...ctx, step: 5 },
    );
    for (const [i, call] of next.calls.entries()) {
      expect(call.published!.idempotencyKey).not.toBe(first.calls[i]!.published!.idempotencyKey);
    }
  });

  it('answers a free-text custom tool call itself and publishes only the others', async () => {
    const client = await h.client();
    const response: ChatCompletion = openAIFixture();
    const [first] = response.choices[0]!.message.tool_calls!;
    response.choices[0]!.message.tool_calls = [
      first!,
      { id: 'call_custom', type: 'custom', custom: { name: 'free_text', input: '{"a":1}' } },
    ];
    const outcome = await client.runTurn(
      { provider: 'openai', response },
      { principal, taskId: 't', step: 0 },
    );
    expect((await published()).map((e) => e.providerCallId)).toEqual([first!.id]);
    expect(outcome.results.map((r) => [r.callId, r.outcome])).toEqual([
      [first!.id, 'SUCCESS'],
      ['call_custom', 'SCHEMA_INVALID'],
    ]);
    expect(outcome.calls[1]!.published).toBeUndefined();
    expect(outcome.messages.map((m) => m.tool_call_id)).toEqual([first!.id, 'call_custom']);
  });

  it('tells onPublished, once and before the results, the calls the broker took; a throw there changes nothing', async () => {
    const client = await h.client();
    const response: ChatCompletion = openAIFixture();
    response.choices[0]!.message.tool_calls!.push({
      id: 'call_custom',
      type: 'custom',
      custom: { name: 'free_text', input: '{}' },
    });
    const told: string[][] = [];
    const outcome = await client.runTurn(
      { provider: 'openai', response },
      { principal, taskId: 't', step: 0 },
      { onPublished: (calls) => told.push(calls.map((c) => c.callId)) },
    );
    const publishedIds = outcome.calls.flatMap((c) =>
      c.published === undefined ? [] : [c.published.callId],
    );
    expect(publishedIds).toHaveLength(3);
    expect(told).toEqual([publishedIds]);
    expect((await published()).map((e) => e.callId)).toEqual(publishedIds);

    const again = await client.runTurn(
      { provider: 'openai', response: openAIFixture() },
      { principal, taskId: 't', step: 1 },
      {
        onPublished: () => {
          throw new Error('listener bug');
        },
      },
    );
    expect(again.results.map((r) => r.outcome)).toEqual(outcome.results.slice(0, 3).map((r) => r.outcome));

    const failing = await h.client({
      topics: { calls: 'toolgate_missing_calls', results: h.topics.results },
    });
    const toldOfFailure: unknown[] = [];
    await expect(
      failing.runTurn(
        { provider: 'anthropic', response: anthropicFixture() },
        { principal, taskId: 't', step: 0 },
        { onPublished: (calls) => toldOfFailure.push(calls) },
      ),
    ).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect(toldOfFailure).toEqual([]);
  });

  it('publishes nothing for a turn without tool calls', async () => {
    const client = await h.client();
    const response = openAIFixture();
    delete response.choices[0]!.message.tool_calls;
    const openai = await client.runTurn(
      { provider: 'openai', response },
      { principal, taskId: 't', step: 0 },
    );
    const anthropic = await client.runTurn(
      { provider: 'anthropic', response: { content: [{ type: 'text', text: 'done', citations: null }] } },
      { principal, taskId: 't', step: 1 },
    );
    expect([openai.results, openai.messages, anthropic.results, anthropic.messages]).toEqual([
      [],
      [],
      [],
      [],
    ]);
    expect(h.publisher.calls).toEqual([]);
  });

  it('refuses, publishing nothing, a malformed context, a past deadline, repeated call ids, an unsigned principal, or a client not started', async () => {
    const client = await h.client();
    const turn = { provider: 'anthropic', response: anthropicFixture() } as const;
    await expect(client.runTurn(turn, { principal, taskId: '', step: 0 })).rejects.toMatchObject({
      code: 'INTERNAL',
    });
    await expect(client.runTurn(turn, { principal, taskId: 't', step: -1 })).rejects.toMatchObject({
      code: 'INTERNAL',
    });
    await expect(
      client.runTurn(turn, { principal: { ...principal, id: '' }, taskId: 't', step: 0 }),
    ).rejects.toBeInstanceOf(ToolgateError);
    await expect(
      client.runTurn(turn, { principal, taskId: 't', step: 0 }, { deadlineMs: Date.now() - 1 }),
    ).rejects.toThrow(/deadline/);
    await expect(
      client.runTurn(turn, { principal, taskId: 't', step: 0 }, { timeoutMs: Number.NaN }),
    ).rejects.toThrow(/deadline/);
    const repeated = anthropicFixture();
    repeated.content = [repeated.content[1]!, repeated.content[1]!];
    await expect(
      client.runTurn({ provider: 'anthropic', response: repeated }, { principal, taskId: 't', step: 0 }),
    ).rejects.toThrow(/repeats a tool call id/);
    const { createToolgateClient } = await import('../../../services/sdk/toolgate-client.js');
    const idle = createToolgateClient({
      publisher: h.publisher,
      subscriber: h.bus,
      codec: h.codec,
      topics: h.topics,
      instanceId: 'idle',
      replySlot: 1,
      signing: { key: h.signingKey, issuer: ISSUER, audience: AUDIENCE },
    });
    await expect(idle.runTurn(turn, { principal, taskId: 't', step: 0 })).rejects.toThrow(
      /Start the toolgate client/,
    );
    expect(h.publisher.calls).toEqual([]);
  });

  it('rejects with DEPENDENCY_UNAVAILABLE when the calls cannot be published', async () => {
    const client = await h.client({ topics: { calls: 'toolgate_missing_calls', results: h.topics.results } });
    const error = await client
      .runTurn({ provider: 'anthropic', response: anthropicFixture() }, { principal, taskId: 't', step: 0 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolgateError);
    expect(error).toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE', retryable: true });
    expect((error as Error).message).toMatch(/same taskId and step/);
  });

  it('refuses a reply slot the results topic does not have, at start', async () => {
    await expect(h.client({ replySlot: 4 })).rejects.toThrow(RangeError);
  });
});
