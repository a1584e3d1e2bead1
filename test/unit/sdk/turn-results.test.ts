import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { UNRESOLVED_MESSAGE } from '../../../libs/providers/result-text.js';
import type { BatchHandler, EventSubscriber, SubscribeOptions } from '../../../libs/ports/event-bus.js';
import { STILL_EXECUTING_MESSAGE } from '../../../services/sdk/call-results.js';
import { replyGroupId } from '../../../services/sdk/client-options.js';
import type { ToolCallResolution } from '../../../services/sdk/result-inbox.js';
import {
  anthropicFixture,
  createSdkHarness,
  openAIFixture,
  principal,
  refusal,
  type ReceivedCall,
  type SdkHarness,
} from './sdk-harness.js';
import { uniqueName } from '../../helpers/names.js';

const ctx = (taskId: string, step = 0) => ({ principal, taskId, step });

/** Lets the fake executor hold calls of some tools until the test releases them. */
function holdTools(h: SdkHarness, tools: readonly string[]): ReceivedCall[] {
  const held: ReceivedCall[] = [];
  const answer = h.executor.respond;
  h.executor.respond = async (call) => {
    if (!tools.includes(call.event.tool)) return answer(call);
    held.push(call);
    return [];
  };
  return held;
}

/** Waits until the instance (reply slot 0) has read and handled `count` results. */
async function resultsRead(h: SdkHarness, instanceId: string, count: number): Promise<void> {
  await vi.waitFor(() =>
    expect(h.bus.committedOffset(replyGroupId(instanceId), h.topics.results, 0)).toBe(String(count)),
  );
}

describe('toolgate client: results', () => {
  let h: SdkHarness;
  beforeEach(async () => {
    h = await createSdkHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('OpenAI: one tool message per call in request order; the unparseable call comes back SCHEMA_INVALID from the executor', async () => {
    const client = await h.client();
    const response = openAIFixture();
    const outcome = await client.runTurn({ provider: 'openai', response }, ctx('task-o'));
    const ids = response.choices[0]!.message.tool_calls!.map((c) => c.id);

    expect(outcome.provider).toBe('openai');
    expect(outcome.results.map((r) => [r.callId, r.outcome])).toEqual([
      [ids[0], 'SUCCESS'],
      [ids[1], 'SUCCESS'],
      [ids[2], 'SCHEMA_INVALID'],
    ]);
    expect(outcome.messages.map((m) => [m.role, m.tool_call_id])).toEqual(ids.map((id) => ['tool', id]));
    expect(JSON.parse(outcome.messages[0]!.content)).toEqual({
      tool: 'get_order_status',
      args: { order_id: 'O-5512' },
    });
    expect(JSON.parse(outcome.messages[2]!.content)).toMatchObject({
      error: { code: 'SCHEMA_INVALID' },
    });
    // The executor saw the bad call: it was published, not dropped at the edge.
    expect(h.executor.received.map((c) => c.event.providerCallId)).toContain(ids[2]);
  });

  it('Anthropic: one user message of tool_result blocks; a refusal is flagged is_error', async () => {
    const client = await h.client();
    const answer = h.executor.respond;
    h.executor.respond = async (call) =>
      call.event.tool === 'issue_refund'
        ? [refusal('UNAUTHORIZED', 'UNAUTHORIZED', 'You are not allowed to refund this order.')]
        : answer(call);
    const response = anthropicFixture();
    const outcome = await client.runTurn({ provider: 'anthropic', response }, ctx('task-a'));
    const ids = response.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));

    expect(outcome.results.map((r) => r.outcome)).toEqual(['SUCCESS', 'UNAUTHORIZED', 'SUCCESS']);
    expect(outcome.messages).toHaveLength(1);
    const [message] = outcome.messages;
    expect(message!.role).toBe('user');
    const blocks = message!.content as ToolResultBlockParam[];
    expect(blocks.map((b) => [b.tool_use_id, b.is_error ?? false])).toEqual([
      [ids[0], false],
      [ids[1], true],
      [ids[2], false],
    ]);
  });

  it('at the deadline, a call still missing is UNRESOLVED "still executing" — never failed', async () => {
    const clock = new ManualClock(Date.now());
    const instanceId = uniqueName('deadline');
    const client = await h.client({ clock, instanceId });
    const held = holdTools(h, ['issue_refund']);
    const running = client.runTurn({ provider: 'anthropic', response: anthropicFixture() }, ctx('task-d'), {
      timeoutMs: 2_000,
    });
    await h.executor.waitForCalls(3);
    await resultsRead(h, instanceId, 2);
    await vi.waitFor(() => expect(clock.pendingSleepers).toBeGreaterThan(0));
    let settled = false;
    void running.then(() => (settled = true));
    await clock.advance(1_999);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(held).toHaveLength(1);
    await clock.advance(1);
    const outcome = await running;

    expect(outcome.results.map((r) => r.outcome)).toEqual(['SUCCESS', 'UNRESOLVED', 'SUCCESS']);
    expect(outcome.results[1]).toMatchObject({
      tool: 'issue_refund',
      error: { code: 'UNRESOLVED', message: STILL_EXECUTING_MESSAGE, retryable: false },
      idempotencyKey: held[0]!.event.idempotencyKey,
    });
    expect(STILL_EXECUTING_MESSAGE).toMatch(/^Still executing, outcome unknown/);
    const block = (outcome.messages[0]!.content as ToolResultBlockParam[])[1]!;
    expect(block.is_error).toBeUndefined();
    expect(JSON.parse(block.content as string)).toEqual({
      status: 'outcome_unknown',
      code: 'UNRESOLVED',
      message: UNRESOLVED_MESSAGE,
      retryable: false,
    });
    expect(block.content as string).not.toMatch(/fail/i);
  });

  it('dedupes results by call id: the first wins, a definite result supersedes UNRESOLVED', async () => {
    const client = await h.client();
    const held = holdTools(h, ['get_order_status', 'issue_refund', 'reserve_inventory']);
    const running = client.runTurn({ provider: 'anthropic', response: anthropicFixture() }, ctx('task-dup'));
    await vi.waitFor(() => expect(held).toHaveLength(3));
    const [status, refund, reserve] = held.map((c) => c.event);
    // Redelivery answered the first call twice; the executor lost track of the refund, then the
    // reconciler found it applied. All on one partition, in this order, before the last answer.
    await h.executor.answer(
      status!,
      { outcome: 'SUCCESS', payloadJson: '{"n":1}' },
      refusal('EXECUTION_ERROR', 'SERVER_ERROR', 'x'),
    );
    await h.executor.answer(
      refund!,
      { outcome: 'UNRESOLVED' },
      { outcome: 'SUCCESS', payloadJson: '{"refund_id":"R-1"}', source: 'reconciler' },
      refusal('EXECUTION_ERROR', 'SERVER_ERROR', 'late duplicate'),
    );
    await h.executor.answer(reserve!, { outcome: 'SUCCESS', payloadJson: '{"reservation_id":"RES-1"}' });
    const outcome = await running;

    expect(outcome.results.map((r) => [r.outcome, r.payload])).toEqual([
      ['SUCCESS', { n: 1 }],
      ['SUCCESS', { refund_id: 'R-1' }],
      ['SUCCESS', { reservation_id: 'RES-1' }],
    ]);
    expect(outcome.results).toHaveLength(3);
  });

  it('passes a definite result arriving after the turn returned UNRESOLVED to onResolution, once', async () => {
    const resolutions: ToolCallResolution[] = [];
    const clock = new ManualClock(Date.now());
    const instanceId = uniqueName('late');
    const client = await h.client({ clock, instanceId, onResolution: (r) => resolutions.push(r) });
    const held = holdTools(h, ['issue_refund', 'reserve_inventory']);
    const running = client.runTurn(
      { provider: 'anthropic', response: anthropicFixture() },
      ctx('task-late'),
      {
        timeoutMs: 1_000,
      },
    );
    await vi.waitFor(() => expect(held).toHaveLength(2));
    const [refund, reserve] = held.map((c) => c.event);
    // The executor itself reports the reservation unknown; the refund never answers in time.
    await h.executor.answer(reserve!, { outcome: 'UNRESOLVED' });
    await resultsRead(h, instanceId, 2);
    await vi.waitFor(() => expect(clock.pendingSleepers).toBeGreaterThan(0));
    await clock.advance(1_000);
    const outcome = await running;
    expect(outcome.results.map((r) => r.outcome)).toEqual(['SUCCESS', 'UNRESOLVED', 'UNRESOLVED']);

    await h.executor.answer(refund!, { outcome: 'SUCCESS', payloadJson: '{"refund_id":"R-9"}' });
    await h.executor.answer(refund!, { outcome: 'SUCCESS', payloadJson: '{"refund_id":"R-9"}' }); // duplicate
    await h.executor.answer(reserve!, { outcome: 'UNRESOLVED' }); // no news
    await h.executor.answer({ ...reserve!, callId: 'not-a-call-of-this-client' }, { outcome: 'SUCCESS' });
    await h.executor.answer(reserve!, {
      outcome: 'POLICY_VIOLATION',
      source: 'reconciler',
      error: {
        code: 'POLICY_VIOLATION',
        message: 'not applied',
        retryable: false,
        retryAfterMs: null,
        suggestedFix: null,
      },
    });
    await vi.waitFor(() => expect(resolutions).toHaveLength(2));

    expect(resolutions.map((r) => [r.call.callId, r.result.callId, r.result.outcome, r.source])).toEqual([
      [refund!.callId, refund!.providerCallId, 'SUCCESS', 'executor'],
      [reserve!.callId, reserve!.providerCallId, 'POLICY_VIOLATION', 'reconciler'],
    ]);
    expect(resolutions[0]!.result.payload).toEqual({ refund_id: 'R-9' });
    expect(resolutions[0]!.call).toMatchObject({ taskId: 'task-late', tenant: 't1', tool: 'issue_refund' });
    // Everything published after these was read (one partition, in order), so nothing else came.
    await h.executor.answer(refund!, { outcome: 'SUCCESS' });
    const sentinel = { ...reserve!, callId: 'sentinel' };
    await h.executor.answer(sentinel, { outcome: 'SUCCESS' });
    expect(h.bus.endOffset(h.topics.results, 0)).toBe('9');
    await resultsRead(h, instanceId, 9);
    expect(resolutions).toHaveLength(2);
  });

  it('stop ends a waiting turn at once with its missing calls UNRESOLVED', async () => {
    const instanceId = uniqueName('stop');
    const client = await h.client({ instanceId });
    holdTools(h, ['issue_refund']);
    const running = client.runTurn(
      { provider: 'anthropic', response: anthropicFixture() },
      ctx('task-stop'),
      {
        timeoutMs: 60_000,
      },
    );
    await h.executor.waitForCalls(3);
    await resultsRead(h, instanceId, 2);
    await client.stop();
    expect((await running).results.map((r) => r.outcome)).toEqual(['SUCCESS', 'UNRESOLVED', 'SUCCESS']);
    await expect(
      client.runTurn({ provider: 'anthropic', response: anthropicFixture() }, ctx('x')),
    ).rejects.toThrow(/stopped/);
  });

  it('each instance fetches only its own reply partition', async () => {
    const fetched = new Map<number, number[]>();
    const counting: EventSubscriber = {
      subscribe: (options: SubscribeOptions, handler: BatchHandler) =>
        h.bus.subscribe(options, (batch, control) => {
          const slot = options.partitions![0]!;
          fetched.set(slot, [...(fetched.get(slot) ?? []), ...batch.messages.map((m) => m.partition)]);
          return handler(batch, control);
        }),
    };
    const a = await h.client({ replySlot: 1, subscriber: counting });
    const b = await h.client({ replySlot: 3, subscriber: counting });
    const [ra, rb] = await Promise.all([
      a.runTurn({ provider: 'anthropic', response: anthropicFixture() }, ctx('task-a')),
      b.runTurn({ provider: 'openai', response: openAIFixture() }, ctx('task-b')),
    ]);
    expect(ra.results.map((r) => r.outcome)).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS']);
    expect(rb.results.map((r) => r.outcome)).toEqual(['SUCCESS', 'SUCCESS', 'SCHEMA_INVALID']);
    expect(fetched.get(1)).toEqual([1, 1, 1]);
    expect(fetched.get(3)).toEqual([3, 3, 3]);
  });
});
