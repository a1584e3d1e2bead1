import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callerError, outcomeUnknown, serverError } from '../../../libs/index.js';
import type { DeadLetterEvent, ToolCallResultEvent } from '../../../libs/events/contracts.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { RetrySafety, ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { createHarness, TENANT, type Harness } from './harness.js';

/**
 * The error contract a tool author relies on, observed where an agent sees it: a call published to
 * the calls topic, run by an executor on the memory bus, answered on the results topic. For each way
 * a tool can fail — `callerError`, `serverError`, `outcomeUnknown` and a plain `throw new Error()` —
 * on a state-changing and on a read-only tool: the outcome and code the agent receives, whether a
 * dead letter is written, whether the idempotency claim is released (an identical second call runs
 * the tool again) or completed (it does not), and how often the tool ran.
 */

type Failure = 'caller' | 'server' | 'server-final' | 'unknown' | 'plain';

const CALLER_MESSAGE = 'There is no ticket T-404.';
const CALLER_FIX = 'Use a ticket id from lookup_ticket.';
const SERVER_MESSAGE = 'The ticket service is down; nothing was changed. Try again in a few minutes.';
const UNKNOWN_MESSAGE = 'The ticket service took the request but its answer was lost.';

function thrown(failure: Failure): Error {
  switch (failure) {
    case 'caller':
      return callerError(CALLER_MESSAGE, { suggestedFix: CALLER_FIX });
    case 'server':
      return serverError(SERVER_MESSAGE, { cause: new Error('HTTP 503 from tickets.internal') });
    case 'server-final':
      return serverError(SERVER_MESSAGE, { retryable: false });
    case 'unknown':
      return outcomeUnknown(UNKNOWN_MESSAGE, { cause: new Error('socket hang up') });
    case 'plain':
      return new Error('ticket not found (db=tickets-prod password=hunter2)');
  }
}

interface CountedTool {
  readonly tool: ToolDefinition;
  /** Every invocation's attempt number, in order. */
  readonly attempts: number[];
}

/**
 * A ticket tool whose invocations fail as `failures` says, in order (the last one repeats);
 * `'ok'` succeeds.
 */
function ticketTool(opts: {
  readonly name: string;
  readonly stateChanging: boolean;
  readonly failures: readonly (Failure | 'ok')[];
  readonly maxAttempts?: number;
  readonly retrySafety?: RetrySafety<{ ticket: string }>;
}): CountedTool {
  const attempts: number[] = [];
  const tool = defineTool({
    name: opts.name,
    version: '1.0.0',
    description: opts.stateChanging ? 'Close one support ticket.' : 'Look up one support ticket.',
    input: z.object({ ticket: z.string() }),
    output: z.object({ ticket: z.string(), status: z.string() }),
    scopes: [],
    owner: 'support',
    stateChanging: opts.stateChanging,
    ...(opts.retrySafety === undefined ? {} : { retrySafety: opts.retrySafety }),
    retry: { maxAttempts: opts.maxAttempts ?? 1, baseDelayMs: 1, maxDelayMs: 5 },
    timeoutMs: 2_000,
    auditFields: ['ticket'],
    execute: async (args, inv) => {
      attempts.push(inv.attempt);
      const next = opts.failures[Math.min(attempts.length, opts.failures.length) - 1]!;
      if (next === 'ok') return { ticket: args.ticket, status: 'closed' };
      throw thrown(next);
    },
  });
  return { tool: tool as unknown as ToolDefinition, attempts };
}

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

let task = 0;

interface TwoCalls {
  readonly first: ToolCallResultEvent;
  readonly second: ToolCallResultEvent;
  readonly deadLetters: DeadLetterEvent[];
}

/**
 * Publishes one call of `tool`, waits for its result, then publishes an identical call (same task,
 * step, position and arguments, so the same idempotency key; a new call id) and waits for that.
 * Dead letters are published before a call's result, so every dead letter of both calls is on the
 * topic once both results are.
 */
async function callTwice(tool: CountedTool): Promise<TwoCalls> {
  h = await createHarness([tool.tool]);
  const taskId = `failure-task-${++task}`;
  const fields = { tool: tool.tool.name, taskId, resourceKey: `${TENANT}:ticket:T-404` };
  const first = await h.request({ ticket: 'T-404' }, fields);
  const second = await h.request({ ticket: 'T-404' }, fields);
  expect(second.idempotencyKey).toBe(first.idempotencyKey);
  expect(second.callId).not.toBe(first.callId);
  await h.executor().start();

  await h.publishCalls([first]);
  await h.read('results', 1);
  await h.publishCalls([second]);
  const results = await h.read('results', 2);
  const byId = new Map(results.map((r) => [r.event.callId, r.event]));
  const dlqCount = Number(h.bus.endOffset(h.topics.dlq, 0));
  const deadLetters = dlqCount === 0 ? [] : (await h.read('dlq', dlqCount)).map((d) => d.event);
  return { first: byId.get(first.callId)!, second: byId.get(second.callId)!, deadLetters };
}

function deadLetterReasons(run: TwoCalls): Array<[string | null, string]> {
  return run.deadLetters.map((d) => [d.callId, d.reason]);
}

describe('a state-changing tool (retrySafety none)', () => {
  it('callerError: EXECUTION_ERROR / CALLER_ERROR with its message and fix, claim released, no dead letter', async () => {
    const tool = ticketTool({ name: 'close_ticket', stateChanging: true, failures: ['caller'] });
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      error: { code: 'CALLER_ERROR', message: CALLER_MESSAGE, retryable: true, suggestedFix: CALLER_FIX },
      toolInvocations: 1,
    });
    // Released: the identical call runs the tool again.
    expect(run.second).toMatchObject({ outcome: 'EXECUTION_ERROR', toolInvocations: 1 });
    expect(tool.attempts).toEqual([1, 1]);
    expect(run.deadLetters).toEqual([]);
  });

  it('serverError: EXECUTION_ERROR / SERVER_ERROR, claim released, dead-lettered EXHAUSTED, cause not shown', async () => {
    const tool = ticketTool({ name: 'close_ticket', stateChanging: true, failures: ['server'] });
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      error: { code: 'SERVER_ERROR', message: SERVER_MESSAGE, retryable: true, suggestedFix: null },
      toolInvocations: 1,
    });
    expect(run.second).toMatchObject({ outcome: 'EXECUTION_ERROR', toolInvocations: 1 });
    expect(tool.attempts).toEqual([1, 1]);
    expect(deadLetterReasons(run)).toEqual([
      [run.first.callId, 'EXHAUSTED'],
      [run.second.callId, 'EXHAUSTED'],
    ]);
    expect(JSON.stringify(run.first)).not.toContain('tickets.internal');
  });

  it('outcomeUnknown: UNRESOLVED, claim completed (the identical call does not run), dead-lettered UNRESOLVED', async () => {
    const tool = ticketTool({ name: 'close_ticket', stateChanging: true, failures: ['unknown'] });
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({
      outcome: 'UNRESOLVED',
      error: { code: 'UNRESOLVED', retryable: false },
      toolInvocations: 1,
    });
    // The model is told not to repeat it, not the tool's own sentence about a lost answer.
    expect(run.first.error!.message).toMatch(/will be reconciled.*Do not repeat it/);
    expect(run.second).toMatchObject({
      outcome: 'UNRESOLVED',
      error: { code: 'UNRESOLVED' },
      toolInvocations: 0,
    });
    expect(tool.attempts).toEqual([1]);
    // Each answer the agent got as UNRESOLVED is dead-lettered, both under the call's one key.
    expect(deadLetterReasons(run)).toEqual([
      [run.first.callId, 'UNRESOLVED'],
      [run.second.callId, 'UNRESOLVED'],
    ]);
    expect(new Set(run.deadLetters.map((d) => d.idempotencyKey))).toEqual(
      new Set([run.first.idempotencyKey]),
    );
  });

  it('a plain Error is an unknown outcome: UNRESOLVED, claim completed, dead-lettered, its text never shown', async () => {
    const tool = ticketTool({ name: 'close_ticket', stateChanging: true, failures: ['plain'] });
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({
      outcome: 'UNRESOLVED',
      error: { code: 'UNRESOLVED' },
      toolInvocations: 1,
    });
    expect(run.second).toMatchObject({ outcome: 'UNRESOLVED', toolInvocations: 0 });
    expect(tool.attempts).toEqual([1]);
    expect(deadLetterReasons(run)).toEqual([
      [run.first.callId, 'UNRESOLVED'],
      [run.second.callId, 'UNRESOLVED'],
    ]);
    expect(JSON.stringify([run.first, run.second, run.deadLetters])).not.toContain('hunter2');
  });
});

describe('a state-changing tool that forwards its key (maxAttempts 3)', () => {
  const forwards = { kind: 'forwards-key' } as const;

  it('outcomeUnknown is retried under the same key; a later success is SUCCESS with no dead letter', async () => {
    const tool = ticketTool({
      name: 'close_ticket',
      stateChanging: true,
      failures: ['unknown', 'ok'],
      maxAttempts: 3,
      retrySafety: forwards,
    });
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({ outcome: 'SUCCESS', toolInvocations: 2 });
    // Completed as SUCCESS: the identical call is answered from the record.
    expect(run.second).toMatchObject({ outcome: 'DUPLICATE', toolInvocations: 0 });
    expect(tool.attempts).toEqual([1, 2]);
    expect(run.deadLetters).toEqual([]);
  });

  it('outcomeUnknown on every attempt ends UNRESOLVED after all three', async () => {
    const tool = ticketTool({
      name: 'close_ticket',
      stateChanging: true,
      failures: ['unknown'],
      maxAttempts: 3,
      retrySafety: forwards,
    });
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({ outcome: 'UNRESOLVED', toolInvocations: 3 });
    expect(run.second).toMatchObject({ outcome: 'UNRESOLVED', toolInvocations: 0 });
    expect(tool.attempts).toEqual([1, 2, 3]);
    expect(deadLetterReasons(run)).toEqual([
      [run.first.callId, 'UNRESOLVED'],
      [run.second.callId, 'UNRESOLVED'],
    ]);
  });

  it('serverError is retried as the policy allows, then EXECUTION_ERROR; the claim is released', async () => {
    const tool = ticketTool({
      name: 'close_ticket',
      stateChanging: true,
      failures: ['server'],
      maxAttempts: 3,
      retrySafety: forwards,
    });
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      error: { code: 'SERVER_ERROR' },
      toolInvocations: 3,
    });
    expect(run.second).toMatchObject({ outcome: 'EXECUTION_ERROR', toolInvocations: 3 });
    expect(tool.attempts).toEqual([1, 2, 3, 1, 2, 3]);
    expect(deadLetterReasons(run)).toEqual([
      [run.first.callId, 'EXHAUSTED'],
      [run.second.callId, 'EXHAUSTED'],
    ]);
  });

  it('serverError with retryable: false is not retried, and the model is told so', async () => {
    const tool = ticketTool({
      name: 'close_ticket',
      stateChanging: true,
      failures: ['server-final'],
      maxAttempts: 3,
      retrySafety: forwards,
    });
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      error: { code: 'SERVER_ERROR', message: SERVER_MESSAGE, retryable: false },
      toolInvocations: 1,
    });
    expect(tool.attempts).toEqual([1, 1]);
  });

  it('callerError is never retried by the executor', async () => {
    const tool = ticketTool({
      name: 'close_ticket',
      stateChanging: true,
      failures: ['caller'],
      maxAttempts: 3,
      retrySafety: forwards,
    });
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      error: { code: 'CALLER_ERROR' },
      toolInvocations: 1,
    });
    expect(tool.attempts).toEqual([1, 1]);
    expect(run.deadLetters).toEqual([]);
  });
});

describe('a read-only tool (maxAttempts 2): no claim, no dead letter, every call runs', () => {
  const readOnly = (failures: readonly (Failure | 'ok')[]): CountedTool =>
    ticketTool({ name: 'lookup_ticket', stateChanging: false, failures, maxAttempts: 2 });

  it('callerError: EXECUTION_ERROR / CALLER_ERROR, not retried', async () => {
    const tool = readOnly(['caller']);
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      error: { code: 'CALLER_ERROR', message: CALLER_MESSAGE, suggestedFix: CALLER_FIX },
      toolInvocations: 1,
    });
    expect(run.second).toMatchObject({ outcome: 'EXECUTION_ERROR', toolInvocations: 1 });
    expect(tool.attempts).toEqual([1, 1]);
    expect(run.deadLetters).toEqual([]);
  });

  it('serverError: retried, then EXECUTION_ERROR / SERVER_ERROR', async () => {
    const tool = readOnly(['server']);
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      error: { code: 'SERVER_ERROR', message: SERVER_MESSAGE },
      toolInvocations: 2,
    });
    expect(run.second).toMatchObject({ outcome: 'EXECUTION_ERROR', toolInvocations: 2 });
    expect(tool.attempts).toEqual([1, 2, 1, 2]);
    expect(run.deadLetters).toEqual([]);
  });

  it('outcomeUnknown is a timeout: retried, then EXECUTION_ERROR / TIMEOUT with its message', async () => {
    const tool = readOnly(['unknown']);
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      error: { code: 'TIMEOUT', message: UNKNOWN_MESSAGE, retryable: true },
      toolInvocations: 2,
    });
    expect(run.second).toMatchObject({ outcome: 'EXECUTION_ERROR', toolInvocations: 2 });
    expect(tool.attempts).toEqual([1, 2, 1, 2]);
    expect(run.deadLetters).toEqual([]);
  });

  it('outcomeUnknown then success is SUCCESS', async () => {
    const tool = readOnly(['unknown', 'ok']);
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({ outcome: 'SUCCESS', toolInvocations: 2 });
    // No claim for a read-only tool: the identical call runs again (and succeeds: 'ok' repeats).
    expect(run.second).toMatchObject({ outcome: 'SUCCESS', toolInvocations: 1 });
    expect(tool.attempts).toEqual([1, 2, 1]);
  });

  it('a plain Error: EXECUTION_ERROR / INTERNAL, not retried, not reconciled, its text never shown', async () => {
    const tool = readOnly(['plain']);
    const run = await callTwice(tool);
    expect(run.first).toMatchObject({
      outcome: 'EXECUTION_ERROR',
      error: { code: 'INTERNAL', retryable: false },
      toolInvocations: 1,
    });
    expect(run.second).toMatchObject({ outcome: 'EXECUTION_ERROR', toolInvocations: 1 });
    expect(tool.attempts).toEqual([1, 1]);
    expect(run.deadLetters).toEqual([]);
    expect(JSON.stringify([run.first, run.second])).not.toContain('hunter2');
  });
});
