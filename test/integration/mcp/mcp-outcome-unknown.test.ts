import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTCOME_UNKNOWN_TEXT } from '../../../services/mcp-gateway/call-result.js';
import { OUTCOME_UNKNOWN_TASK_MESSAGE } from '../../../services/mcp-gateway/tasks.js';
import { connectModern } from './mcp-clients.js';
import { SHIPPING_SCOPE } from '../../fixtures/mcp/gateway-tools.js';
import { createSlowAnswerStack, type McpStack } from './mcp-stack.js';
import { rawTasksGet, rawToolsCall, WITH_TASKS, type RawAnswer } from './raw-modern-call.js';

describe('a call whose answer comes after the gateway stopped waiting', () => {
  let stack: McpStack;
  let token: string;
  beforeAll(async () => {
    ({ stack, token } = await createSlowAnswerStack('mcp_unknown'));
  }, 60_000);
  afterAll(() => stack?.close());

  it('is answered "outcome unknown — do not retry", never failed; later the same call gets the result, with one effect', async () => {
    const orderId = `O-slow-${Date.now()}`;
    const args = { order_id: orderId, hang_ms: 5_000 };
    const client = await connectModern(stack.url, token);
    try {
      const first = await client.callTool('book_shipment', args);
      expect(first.isError).toBe(true);
      expect(first.content[0]!.text).toContain(OUTCOME_UNKNOWN_TEXT);
      expect(first._meta?.['io.toolgate/result']).toMatchObject({
        outcome: 'UNRESOLVED',
        error: { code: 'UNRESOLVED', retryable: false },
      });
      expect(stack.records.at(-1)).toMatchObject({ outcome: 'tool-unknown-outcome', tool: 'book_shipment' });

      // The call runs on after the gateway stopped waiting: the tool books, then hangs past its
      // timeout, and a status check — the executor's, or the reconciler's when the executor could
      // not tell — finds the booking and answers the call SUCCESS on the results topic, never a
      // failure (a call refused unrun for being late would be one).
      const [call] = await stack.waitFor('calls', (c) => c.argumentsJson.includes(orderId));
      const answers = await stack.waitFor(
        'results',
        (r) => r.callId === call!.callId && r.outcome !== 'UNRESOLVED',
      );
      expect(answers.map((r) => r.outcome)).toEqual(['SUCCESS']);

      // The same call again is answered from the stored result. How soon it is answered depends on
      // the host, not on the gateway: a repeat not answered within the gateway's wait is "outcome
      // unknown" like any other (never failed), and the client may repeat it — it is one logical call.
      let again = await client.callTool('book_shipment', args);
      const until = Date.now() + 30_000;
      const outcomeOf = (answer: typeof again): unknown =>
        (answer._meta?.['io.toolgate/result'] as { outcome?: unknown } | undefined)?.outcome;
      while (outcomeOf(again) === 'UNRESOLVED' && Date.now() < until) {
        expect(again.content[0]!.text).toContain(OUTCOME_UNKNOWN_TEXT);
        await new Promise((r) => setTimeout(r, 200));
        again = await client.callTool('book_shipment', args);
      }
      expect(again.isError).toBeFalsy();
      expect(again.structuredContent).toEqual({ booking_id: `B-${orderId}` });
      expect(again._meta?.['io.toolgate/result']).toMatchObject({ outcome: 'DUPLICATE' });
    } finally {
      await client.close();
    }
    expect(stack.effects.of('book_shipment')).toBe(1);
  });

  it('to a client that supports tasks, is a task handle, never failed; the call runs on and its result settles the task, with one effect', async () => {
    const orderId = `O-task-${Date.now()}`;
    const args = { order_id: orderId, hang_ms: 5_000 };
    const effectsBefore = stack.effects.of('book_shipment');
    const created = await rawToolsCall(stack.url, token, {
      name: 'book_shipment',
      arguments: args,
      capabilities: WITH_TASKS,
    });
    expect(created.status).toBe(200);
    const handle = created.result!;
    expect(handle).toMatchObject({
      resultType: 'task',
      status: 'working',
      statusMessage: OUTCOME_UNKNOWN_TASK_MESSAGE,
    });
    expect(handle).not.toHaveProperty('isError');
    const taskId = handle.taskId as string;
    // The task id is the toolgate call id: the call on Kafka and the request record name it.
    const [call] = await stack.waitFor('calls', (c) => c.argumentsJson.includes(orderId));
    expect(taskId).toBe(call!.callId);
    expect(stack.records.at(-1)).toMatchObject({
      method: 'tools/call',
      outcome: 'task-created',
      tool: 'book_shipment',
      callId: taskId,
      toolOutcome: 'UNRESOLVED',
    });

    // Nobody else can read it, and it cannot be read without the extension.
    const other = await stack.issuer.token({
      sub: 'user-eve',
      tenant: 'acme',
      scope: `mcp:tools ${SHIPPING_SCOPE}`,
    });
    expect((await rawTasksGet(stack.url, other, taskId)).error?.code).toBe(-32602);
    expect((await rawTasksGet(stack.url, token, taskId, {})).error?.code).toBe(-32021);

    // A status check (the executor's, or the reconciler's) finds the booking and answers SUCCESS on
    // the results topic; the gateway's client passes that on and the task completes.
    let polled: RawAnswer | undefined;
    const deadline = Date.now() + 30_000;
    for (;;) {
      polled = await rawTasksGet(stack.url, token, taskId);
      expect(polled.error).toBeUndefined();
      if (polled.result!.status !== 'working' || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(polled.result).toMatchObject({
      taskId,
      status: 'completed',
      resultType: 'complete',
      result: {
        structuredContent: { booking_id: `B-${orderId}` },
        _meta: { 'io.toolgate/result': { outcome: 'SUCCESS' } },
      },
    });
    const answers = await stack.waitFor('results', (r) => r.callId === taskId && r.outcome !== 'UNRESOLVED');
    expect(answers.map((r) => r.outcome)).toEqual(['SUCCESS']);
    expect(stack.effects.of('book_shipment')).toBe(effectsBefore + 1);
  });
});
