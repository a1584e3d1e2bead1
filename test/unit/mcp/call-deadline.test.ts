import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { ToolCallRequestedEvent, ToolCallResultEvent } from '../../../libs/events/contracts.js';
import { attemptScope } from '../../../libs/execution/attempt-scope.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { DEFAULT_CALL_DEADLINE_MS, runGatewayCall } from '../../../services/mcp-gateway/tool-call.js';
import type { ToolCallResolution } from '../../../services/sdk/result-inbox.js';
import {
  createSdkHarness,
  principal,
  refusal,
  type ReceivedCall,
  type SdkHarness,
} from '../sdk/sdk-harness.js';
import { fixtureTools, registryOf } from '../sdk/test-tools.js';

const tools = fixtureTools();
const refund = tools.find((t) => t.name === 'issue_refund')!;
const ARGS = { order_id: 'O-7', amount: 5, currency: 'EUR', reason: 'late' };

/** How long the gateway waits for a result in these tests. */
const WAIT_MS = 300;

/**
 * What an executor does with a call it takes at `nowMs`, by its own rule (`attemptScope`, which
 * `runGuarded` starts every attempt with): a call whose deadline has passed is not sent — refused,
 * "it did not run"; any other call runs (here, at once and successfully).
 */
function executorAnswer(
  event: ToolCallRequestedEvent,
  tool: ToolDefinition,
  clock: ManualClock,
): Partial<ToolCallResultEvent> {
  const scope = attemptScope(
    new AbortController().signal,
    tool.timeoutMs,
    event.deadlineMs ?? undefined,
    clock,
  );
  try {
    if (scope.signal.aborted) {
      return refusal(
        'EXECUTION_ERROR',
        'TIMEOUT',
        "The call's deadline passed before it was sent; it did not run.",
      );
    }
    return { outcome: 'SUCCESS', payloadJson: '{"refund_id":"R-O-7","amount":5}', toolInvocations: 1 };
  } finally {
    scope.dispose();
  }
}

describe('a gateway call the gateway stopped waiting for', () => {
  let h: SdkHarness;
  let clock: ManualClock;
  let held: ReceivedCall[];
  let resolutions: ToolCallResolution[];

  beforeEach(async () => {
    h = await createSdkHarness();
    clock = new ManualClock(Date.now());
    held = [];
    resolutions = [];
    // The executor is slow to get to calls (a loaded host): it holds each until the test lets it run.
    h.executor.respond = (call) => {
      held.push(call);
      return Promise.resolve([]);
    };
  });
  afterEach(async () => {
    await h.close();
  });

  /** Runs one gateway call and ends the gateway's wait without an answer: "outcome unknown". */
  async function unansweredCall(callDeadlineMs?: number): Promise<ToolCallRequestedEvent> {
    const client = await h.client({
      clock,
      tools: registryOf(tools),
      onResolution: (r) => resolutions.push(r),
    });
    const startedAtMs = clock.now();
    const running = runGatewayCall(client, {
      principal,
      tool: refund,
      args: ARGS,
      meta: undefined,
      timeoutMs: WAIT_MS,
      ...(callDeadlineMs === undefined ? {} : { callDeadlineMs }),
    });
    await vi.waitFor(() => expect(held).toHaveLength(1));
    await vi.waitFor(() => expect(clock.pendingSleepers).toBeGreaterThan(0));
    let answered = false;
    void running.then(() => (answered = true));
    await clock.advance(WAIT_MS - 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    await clock.advance(1);
    const outcome = await running;
    // What the MCP client reads: the outcome is unknown, do not call again.
    expect(outcome.result).toMatchObject({
      outcome: 'UNRESOLVED',
      error: { code: 'UNRESOLVED', retryable: false },
    });
    expect(clock.now() - startedAtMs).toBe(WAIT_MS);
    expect(outcome.callId).toBe(held[0]!.event.callId);
    return held[0]!.event;
  }

  it('still runs when an executor takes it after the wait, so its late answer is its result, never a refusal for being late', async () => {
    const call = await unansweredCall();
    // The executor gets to the call a second after the gateway answered "outcome unknown".
    await clock.advance(1_000);
    await h.executor.answer(call, executorAnswer(call, refund, clock));
    await vi.waitFor(() => expect(resolutions).toHaveLength(1));

    expect(resolutions[0]!.call.callId).toBe(call.callId);
    expect(resolutions[0]!.result).toMatchObject({
      outcome: 'SUCCESS',
      payload: { refund_id: 'R-O-7', amount: 5 },
    });
  });

  it("publishes the call with its own deadline, not the gateway's wait: the default, or callDeadlineMs", async () => {
    const byDefault = await unansweredCall();
    expect(byDefault.deadlineMs! - byDefault.requestedAtMs).toBe(DEFAULT_CALL_DEADLINE_MS);

    held.length = 0;
    const configured = await unansweredCall(5_000);
    expect(configured.deadlineMs! - configured.requestedAtMs).toBe(5_000);
  });

  it('never gives a call a deadline before the end of the wait', async () => {
    const call = await unansweredCall(WAIT_MS / 3);
    expect(call.deadlineMs! - call.requestedAtMs).toBe(WAIT_MS);
  });
});

describe('runTurn with waitMs', () => {
  let h: SdkHarness;
  beforeEach(async () => {
    h = await createSdkHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  const turn = {
    provider: 'openai' as const,
    response: {
      role: 'assistant' as const,
      content: null,
      tool_calls: [
        {
          id: 'c1',
          type: 'function' as const,
          function: { name: 'issue_refund', arguments: JSON.stringify(ARGS) },
        },
      ],
    },
  };

  it('refuses, publishing nothing, a wait that is not a positive number', async () => {
    const client = await h.client();
    for (const waitMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const refused = client.runTurn(turn, { principal, taskId: 'task-w', step: 0 }, { waitMs });
      await expect(refused).rejects.toBeInstanceOf(ToolgateError);
      await expect(refused).rejects.toMatchObject({ code: 'INTERNAL' });
    }
    expect(h.publisher.calls).toHaveLength(0);
  });

  it('waits no longer than the deadline', async () => {
    const clock = new ManualClock(Date.now());
    const client = await h.client({ clock });
    const held: ReceivedCall[] = [];
    h.executor.respond = (call) => {
      held.push(call);
      return Promise.resolve([]);
    };
    const running = client.runTurn(
      turn,
      { principal, taskId: 'task-w2', step: 0 },
      { timeoutMs: 1_000, waitMs: 60_000 },
    );
    await vi.waitFor(() => expect(held).toHaveLength(1));
    await vi.waitFor(() => expect(clock.pendingSleepers).toBeGreaterThan(0));
    await clock.advance(1_000);
    const outcome = await running;
    expect(outcome.results.map((r) => r.outcome)).toEqual(['UNRESOLVED']);
    expect(held[0]!.event.deadlineMs! - held[0]!.event.requestedAtMs).toBe(1_000);
  });
});
