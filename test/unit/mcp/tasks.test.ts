import { describe, expect, it } from 'vitest';
import type { ToolCallResult } from '../../../libs/core/types.js';
import type { ToolCallResolution } from '../../../services/sdk/index.js';
import { MemoryMcpTaskStore } from '../../../services/mcp-gateway/task-store.js';
import {
  createTaskResult,
  detailedTask,
  McpTasks,
  OUTCOME_UNKNOWN_TASK_MESSAGE,
  taskChangeFor,
  TASKS_EXTENSION,
  tasksNegotiated,
} from '../../../services/mcp-gateway/tasks.js';

const T0 = Date.UTC(2026, 11, 4, 12, 0, 0);

const result = (over: Partial<ToolCallResult>): ToolCallResult => ({
  callId: 'mcp-call',
  tool: 'book',
  outcome: 'SUCCESS',
  toolInvocations: 1,
  ...over,
});

const unresolved = result({
  outcome: 'UNRESOLVED',
  error: { code: 'UNRESOLVED', message: 'still executing', retryable: false },
});

const resolution = (callId: string, r: ToolCallResult): ToolCallResolution => ({
  call: {
    callId,
    providerCallId: 'mcp-call',
    tool: 'book',
    tenant: 'acme',
    taskId: 't',
    idempotencyKey: 'k',
  },
  result: r,
  source: 'reconciler',
});

describe('tasksNegotiated', () => {
  it('is true only when the request declares the extension in its _meta client capabilities', () => {
    const body = (capabilities: unknown) => ({
      method: 'tools/call',
      params: { _meta: { 'io.modelcontextprotocol/clientCapabilities': capabilities } },
    });
    expect(tasksNegotiated(body({ extensions: { [TASKS_EXTENSION]: {} } }))).toBe(true);
    expect(tasksNegotiated(body({ extensions: { 'io.example/other': {} } }))).toBe(false);
    expect(tasksNegotiated(body({ tasks: {} }))).toBe(false);
    expect(tasksNegotiated(body(undefined))).toBe(false);
    expect(tasksNegotiated({ params: {} })).toBe(false);
    expect(tasksNegotiated(null)).toBe(false);
    expect(tasksNegotiated([body({ extensions: { [TASKS_EXTENSION]: {} } })])).toBe(false);
  });
});

describe('taskChangeFor: what a result does to its task', () => {
  it('keeps an unknown outcome working, saying so; never failed', () => {
    expect(taskChangeFor(unresolved, false, T0)).toEqual({
      status: 'working',
      statusMessage: OUTCOME_UNKNOWN_TASK_MESSAGE,
      atMs: T0,
    });
  });

  it('fails only an internal error, as JSON-RPC -32603 carrying the structured error', () => {
    const error = { code: 'INTERNAL' as const, message: 'crashed', retryable: false };
    expect(taskChangeFor(result({ outcome: 'EXECUTION_ERROR', error }), false, T0)).toEqual({
      status: 'failed',
      error: { code: -32603, message: 'crashed', data: { error } },
      atMs: T0,
    });
  });

  it('completes a tool error, a refusal and a success with the result a synchronous call would get', () => {
    const toolError = result({
      outcome: 'EXECUTION_ERROR',
      error: { code: 'CALLER_ERROR', message: 'no such order', retryable: false },
    });
    const refused = result({
      outcome: 'POLICY_VIOLATION',
      error: { code: 'POLICY_VIOLATION', message: 'over the limit', retryable: false },
    });
    for (const r of [toolError, refused]) {
      const change = taskChangeFor(r, false, T0);
      expect(change).toMatchObject({ status: 'completed', result: { isError: true } });
    }
    const ok = taskChangeFor(result({ payload: { booking_id: 'B-1' } }), true, T0);
    expect(ok).toMatchObject({
      status: 'completed',
      result: {
        structuredContent: { booking_id: 'B-1' },
        content: [{ type: 'text', text: '{"booking_id":"B-1"}' }],
      },
    });
    expect((ok as { result: Record<string, unknown> }).result).not.toHaveProperty('isError');
  });
});

describe('McpTasks', () => {
  const principal = { id: 'user-ada', tenant: 'acme' };
  const open = (tasks: McpTasks, callId: string) =>
    tasks.open({ callId, tenant: 'acme', principalId: 'user-ada', tool: 'book', structured: true });

  it('opens a working task owned by its principal only, and answers it on the wire with ISO times and whole ms', async () => {
    let now = T0;
    const tasks = new McpTasks({
      store: new MemoryMcpTaskStore(() => now),
      now: () => now,
      pollIntervalMs: 250.4,
    });
    const task = await open(tasks, 'call-1');
    expect(createTaskResult(task, tasks.pollIntervalMs)).toEqual({
      resultType: 'task',
      taskId: 'call-1',
      status: 'working',
      createdAt: '2026-12-04T12:00:00.000Z',
      lastUpdatedAt: '2026-12-04T12:00:00.000Z',
      ttlMs: 24 * 60 * 60_000,
      pollIntervalMs: 250,
    });
    expect(await tasks.owned('call-1', principal)).toEqual(task);
    expect(await tasks.owned('call-1', { ...principal, id: 'user-eve' })).toBeUndefined();
    expect(await tasks.owned('call-1', { ...principal, tenant: 'globex' })).toBeUndefined();
    await expect(open(tasks, 'call-1')).rejects.toThrow(/exists already/);

    now += 1_000;
    expect(await tasks.settle('call-1', result({ payload: { booking_id: 'B-1' } }), true)).toBe(true);
    const done = (await tasks.owned('call-1', principal))!;
    const wire = detailedTask(done, 1_000);
    expect(wire).toMatchObject({ status: 'completed', lastUpdatedAt: '2026-12-04T12:00:01.000Z' });
    expect(wire).toHaveProperty('result.structuredContent', { booking_id: 'B-1' });
    expect(wire).not.toHaveProperty('error');
    // The first definite outcome wins.
    expect(await tasks.settle('call-1', unresolved, true)).toBe(false);
  });

  it('records a cancel request without pretending the call stopped', async () => {
    const tasks = new McpTasks({ store: new MemoryMcpTaskStore() });
    await open(tasks, 'call-2');
    expect(await tasks.requestCancel('call-2')).toBe(true);
    const task = (await tasks.owned('call-2', principal))!;
    expect(task).toMatchObject({ status: 'working', cancelRequested: true });
    expect(task.statusMessage).toMatch(/does not interrupt/);
  });

  it('settles a task from a late resolution, and applies one that came before its task', async () => {
    const tasks = new McpTasks({ store: new MemoryMcpTaskStore() });
    const errors: unknown[] = [];
    await open(tasks, 'call-3');
    await tasks.settle('call-3', unresolved, true);
    tasks.onResolution(resolution('call-3', result({ payload: { booking_id: 'B-3' } })), (e) =>
      errors.push(e),
    );
    await new Promise((r) => setTimeout(r, 0));
    expect(await tasks.owned('call-3', principal)).toMatchObject({
      status: 'completed',
      result: { structuredContent: { booking_id: 'B-3' } },
    });

    // The resolution overtakes the task (answered UNRESOLVED, resolved before the task was stored).
    tasks.onResolution(resolution('call-4', result({ payload: { booking_id: 'B-4' } })), (e) =>
      errors.push(e),
    );
    await new Promise((r) => setTimeout(r, 0));
    await open(tasks, 'call-4');
    expect(await tasks.owned('call-4', principal)).toMatchObject({ status: 'completed' });
    expect(errors).toEqual([]);
  });

  it('passes a store failure of a late resolution to onError, never throwing', async () => {
    const broken = new MemoryMcpTaskStore();
    broken.get = () => Promise.reject(new Error('redis down'));
    const tasks = new McpTasks({ store: broken });
    const errors: unknown[] = [];
    expect(() => tasks.onResolution(resolution('call-5', unresolved), (e) => errors.push(e))).not.toThrow();
    await new Promise((r) => setTimeout(r, 0));
    expect(errors).toEqual([new Error('redis down')]);
  });
});
