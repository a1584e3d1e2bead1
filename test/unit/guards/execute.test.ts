import { describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from '../../../libs/adapters/memory/index.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { argumentsFingerprint, idempotencyKey } from '../../../libs/core/idempotency-key.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { createExecuteStage } from '../../../libs/guards/execute.js';
import type { ToolInvocation } from '../../../libs/registry/tool-definition.js';
import { hang, http, makeDeps, makeState, makeTool, runTail } from './stage-harness.js';

const ARGS = { orderId: 'O-5512', amount: 49.99 };
const KEY = idempotencyKey({ tenant: 't1', taskId: 'task-1', step: 0, index: 0 }, 'issue_refund', ARGS);

/** A tool body that records each invocation's key and attempt, then does what `script` says. */
function scripted(script: ((inv: ToolInvocation) => Promise<unknown>)[]) {
  const seen: { key: string; attempt: number }[] = [];
  const execute = (_args: unknown, inv: ToolInvocation) => {
    seen.push({ key: inv.idempotencyKey, attempt: inv.attempt });
    const step = script[Math.min(seen.length - 1, script.length - 1)]!;
    return step(inv);
  };
  return { seen, execute };
}

const ok = () => Promise.resolve({ orderId: 'O-5512', status: 'refunded' });
const ATTEMPT_CANCELLED = 'The call was cancelled while it was running; its outcome is unknown.';

describe('execute stage: success and attempts', () => {
  it('runs once, records the attempt and completes the claim with the redacted output', async () => {
    const { seen, execute } = scripted([
      () => Promise.resolve({ orderId: 'O-5512', status: 'refunded', pan: '4111' }),
    ]);
    const deps = makeDeps();
    const state = makeState(makeTool({ execute }));
    const ran = await runTail(state, deps);
    expect(ran.endedAt).toBe('all');
    expect(state.output).toEqual({ orderId: 'O-5512', status: 'refunded' });
    expect(state.toolInvocations).toBe(1);
    expect(state.attempts).toHaveLength(1);
    expect(state.attempts[0]!.result).toBe('ok');
    expect(seen).toEqual([{ key: KEY, attempt: 1 }]);
    const again = await deps.store.claim(KEY, argumentsFingerprint(ARGS), 'someone-else', 1000);
    expect(again).toEqual({
      kind: 'completed',
      stored: expect.objectContaining({
        outcome: 'SUCCESS',
        result: { orderId: 'O-5512', status: 'refunded' },
      }),
    });
  });
});

describe('execute stage: retries only when safe', () => {
  it('state-changing + none: one invocation, then UNRESOLVED on timeout (never EXECUTION_ERROR)', async () => {
    const { seen, execute } = scripted([hang]);
    const deps = makeDeps();
    const state = makeState(makeTool({ execute, timeoutMs: 30, retrySafety: { kind: 'none' } }));
    const ran = await runTail(state, deps);
    expect(ran.endedAt).toBe('execute');
    expect(ran.end).toMatchObject({ kind: 'finish', outcome: 'UNRESOLVED' });
    expect(seen).toHaveLength(1);
    expect(state.toolInvocations).toBe(1);
    expect(state.attempts.map((a) => a.result)).toEqual(['TIMEOUT']);
    // A duplicate is answered UNRESOLVED from the record and does not run the tool again.
    const dup = makeState(makeTool({ execute }));
    const dupRan = await runTail(dup, deps);
    expect(dupRan.end).toMatchObject({ kind: 'finish', outcome: 'UNRESOLVED' });
    expect(seen).toHaveLength(1);
    expect(dup.toolInvocations).toBe(0);
  });

  it('a reset connection on a state-changing call is UNRESOLVED too', async () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const { seen, execute } = scripted([() => Promise.reject(reset)]);
    const ran = await runTail(makeState(makeTool({ execute })), makeDeps());
    expect(ran.end).toMatchObject({ kind: 'finish', outcome: 'UNRESOLVED' });
    expect(seen).toHaveLength(1);
  });

  it('state-changing + none: a reported 5xx is not retried; the claim is released', async () => {
    const { seen, execute } = scripted([() => Promise.reject(http(503)), ok]);
    const deps = makeDeps();
    const ran = await runTail(makeState(makeTool({ execute })), deps);
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'SERVER_ERROR' } });
    expect(seen).toHaveLength(1);
    const next = await deps.store.claim(KEY, argumentsFingerprint(ARGS), 'executor-b', 1000);
    expect(next.kind).toBe('claimed');
  });

  it('forwards-key: timeouts are retried with the SAME idempotency key until success', async () => {
    const { seen, execute } = scripted([hang, hang, ok]);
    const state = makeState(makeTool({ execute, timeoutMs: 30, retrySafety: { kind: 'forwards-key' } }));
    const ran = await runTail(state, makeDeps());
    expect(ran.endedAt).toBe('all');
    expect(seen).toEqual([
      { key: KEY, attempt: 1 },
      { key: KEY, attempt: 2 },
      { key: KEY, attempt: 3 },
    ]);
    expect(state.toolInvocations).toBe(3);
    expect(state.attempts.map((a) => a.result)).toEqual(['TIMEOUT', 'TIMEOUT', 'ok']);
  });

  it('forwards-key: a timeout on the last attempt leaves the outcome unknown: UNRESOLVED', async () => {
    const { seen, execute } = scripted([hang]);
    const ran = await runTail(
      makeState(makeTool({ execute, timeoutMs: 20, retrySafety: { kind: 'forwards-key' } })),
      makeDeps(),
    );
    expect(ran.end).toMatchObject({ kind: 'finish', outcome: 'UNRESOLVED' });
    expect(seen).toHaveLength(3);
  });

  it('caller errors are never retried, whatever the safety', async () => {
    const { seen, execute } = scripted([() => Promise.reject(http(404)), ok]);
    const deps = makeDeps();
    const ran = await runTail(makeState(makeTool({ execute, retrySafety: { kind: 'forwards-key' } })), deps);
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'CALLER_ERROR' } });
    expect(seen).toHaveLength(1);
    expect((await deps.store.claim(KEY, argumentsFingerprint(ARGS), 'b', 1000)).kind).toBe('claimed');
  });

  it('read-only tools retry server errors and take no claim', async () => {
    const { seen, execute } = scripted([() => Promise.reject(http(502)), ok]);
    const deps = makeDeps();
    const tool = makeTool({ execute, stateChanging: false, retrySafety: { kind: 'read-only' } });
    const ran = await runTail(makeState(tool), deps);
    expect(ran.endedAt).toBe('all');
    expect(seen).toHaveLength(2);
    expect((await deps.store.claim(KEY, argumentsFingerprint(ARGS), 'b', 1000)).kind).toBe('claimed');
  });

  it('backoff waits come from the retry policy with the injected jitter', async () => {
    const clock = new ManualClock(1_000);
    const { seen, execute } = scripted([() => Promise.reject(http(500)), ok]);
    const deps = makeDeps({ clock });
    const tool = makeTool({
      execute,
      stateChanging: false,
      retrySafety: { kind: 'read-only' },
      retry: { maxAttempts: 2, baseDelayMs: 400, maxDelayMs: 1_000 },
    });
    const state = makeState(tool);
    state.idempotencyKey = KEY; // what the idempotency stage would have set
    const done = createExecuteStage({ random: () => 0.5 })(state, deps);
    await new Promise((r) => setImmediate(r));
    expect(seen).toHaveLength(1);
    await clock.advance(199);
    expect(seen).toHaveLength(1);
    await clock.advance(1); // full jitter: floor(0.5 × 401) = 200 ms
    await expect(done).resolves.toEqual({ kind: 'continue' });
    expect(seen).toHaveLength(2);
  });
});

describe('execute stage: definite non-effects release the claim', () => {
  it('an open breaker refuses BREAKER_OPEN without invoking the tool', async () => {
    let invoked = 0;
    const execute = () => {
      invoked += 1;
      return Promise.reject(http(500));
    };
    const deps = makeDeps();
    const tool = makeTool({
      execute,
      downstream: 'payments',
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    for (let i = 0; i < 5; i++) {
      await runTail(makeState(tool, { ctx: { index: i } }), deps);
    }
    expect(invoked).toBe(5);
    const state = makeState(tool, { ctx: { index: 99 } });
    const ran = await runTail(state, deps);
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'BREAKER_OPEN' } });
    expect(invoked).toBe(5);
    expect(state.toolInvocations).toBe(0);
    const key = idempotencyKey({ tenant: 't1', taskId: 'task-1', step: 0, index: 99 }, 'issue_refund', ARGS);
    expect((await deps.store.claim(key, argumentsFingerprint(ARGS), 'b', 1000)).kind).toBe('claimed');
  });

  it('no outbound token within the timeout → RATE_LIMITED, not invoked, claim released', async () => {
    let invoked = 0;
    const execute = () => {
      invoked += 1;
      return ok();
    };
    const deps = makeDeps({ outboundLimits: { crm: { capacity: 1, refillPerSecond: 0.001 } } });
    const tool = makeTool({ execute, downstream: 'crm', timeoutMs: 40 });
    expect((await runTail(makeState(tool, { ctx: { index: 0 } }), deps)).endedAt).toBe('all');
    const state = makeState(tool, { ctx: { index: 1 } });
    const ran = await runTail(state, deps);
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'RATE_LIMITED' } });
    expect(invoked).toBe(1);
    const key = idempotencyKey({ tenant: 't1', taskId: 'task-1', step: 0, index: 1 }, 'issue_refund', ARGS);
    expect((await deps.store.claim(key, argumentsFingerprint(ARGS), 'b', 1000)).kind).toBe('claimed');
  });

  it('a deadline already passed never invokes the tool', async () => {
    let invoked = 0;
    const execute = () => {
      invoked += 1;
      return ok();
    };
    const state = makeState(makeTool({ execute }), { ctx: { deadlineMs: Date.now() - 1 } });
    const ran = await runTail(state, makeDeps());
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'TIMEOUT' } });
    expect(invoked).toBe(0);
  });

  it('a tool that ignores its signal still cannot hold the call past its timeout', async () => {
    const execute = () => new Promise<never>(() => undefined);
    const state = makeState(
      makeTool({ execute, timeoutMs: 20, stateChanging: false, retrySafety: { kind: 'read-only' } }),
    );
    const ran = await runTail(state, makeDeps());
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'TIMEOUT' } });
    expect(state.toolInvocations).toBe(3);
  });
});

describe('execute stage: a dead owner was taken over', () => {
  /** Leaves an abandoned claim by "executor-dead" whose lease has run out, as a crash mid-call would. */
  async function abandoned(): Promise<{ deps: ReturnType<typeof makeDeps>; storeClock: ManualClock }> {
    const storeClock = new ManualClock(Date.now());
    const store = new MemoryIdempotencyStore(storeClock);
    await store.claim(KEY, argumentsFingerprint(ARGS), 'executor-dead', 10);
    await storeClock.advance(20);
    return { deps: makeDeps({ store, clock: systemClock }), storeClock };
  }

  it('forwards-key: runs again with the same key (the downstream dedupes)', async () => {
    const { deps } = await abandoned();
    const { seen, execute } = scripted([ok]);
    const state = makeState(makeTool({ execute, retrySafety: { kind: 'forwards-key' } }));
    const ran = await runTail(state, deps);
    expect(state.takenOver).toBe(true);
    expect(ran.endedAt).toBe('all');
    expect(seen).toEqual([{ key: KEY, attempt: 1 }]);
  });

  it('none: UNRESOLVED without running, recorded so duplicates are UNRESOLVED too', async () => {
    const { deps } = await abandoned();
    const { seen, execute } = scripted([ok]);
    const ran = await runTail(makeState(makeTool({ execute, retrySafety: { kind: 'none' } })), deps);
    expect(ran.end).toMatchObject({
      kind: 'finish',
      outcome: 'UNRESOLVED',
      error: expect.any(ToolgateError),
    });
    expect(seen).toHaveLength(0);
    const dup = await deps.store.claim(KEY, argumentsFingerprint(ARGS), 'b', 1000);
    expect(dup).toMatchObject({ kind: 'completed', stored: { outcome: 'UNRESOLVED' } });
  });
});

describe('execute stage: no retry without time for it', () => {
  it('does not start a backoff wait that would end at or past the deadline', async () => {
    const clock = new ManualClock(1_000);
    const { seen, execute } = scripted([() => Promise.reject(http(500)), ok]);
    const tool = makeTool({
      execute,
      stateChanging: false,
      retrySafety: { kind: 'read-only' },
      retry: { maxAttempts: 2, baseDelayMs: 400, maxDelayMs: 1_000 },
    });
    // Jitter 0.5 gives a 200 ms wait; the deadline is exactly 200 ms away.
    const state = makeState(tool, { ctx: { deadlineMs: 1_200 } });
    state.idempotencyKey = KEY;
    const end = await createExecuteStage({ random: () => 0.5 })(state, makeDeps({ clock }));
    expect(end).toMatchObject({ kind: 'refuse', error: { code: 'SERVER_ERROR' } });
    expect(seen).toHaveLength(1);
    expect(clock.now()).toBe(1_000);
  });

  it('retries when the wait ends before the deadline', async () => {
    const clock = new ManualClock(1_000);
    const { seen, execute } = scripted([() => Promise.reject(http(500)), ok]);
    const tool = makeTool({
      execute,
      stateChanging: false,
      retrySafety: { kind: 'read-only' },
      retry: { maxAttempts: 2, baseDelayMs: 400, maxDelayMs: 1_000 },
    });
    const state = makeState(tool, { ctx: { deadlineMs: 5_000 } });
    state.idempotencyKey = KEY;
    const done = createExecuteStage({ random: () => 0.5 })(state, makeDeps({ clock }));
    while (seen.length === 0) await new Promise((r) => setImmediate(r));
    await clock.advance(200);
    await expect(done).resolves.toEqual({ kind: 'continue' });
    expect(seen).toHaveLength(2);
  });

  it('a caller that gave up during an attempt gets no retry', async () => {
    const controller = new AbortController();
    const { seen, execute } = scripted([
      () => {
        controller.abort();
        return Promise.reject(http(500));
      },
      ok,
    ]);
    const tool = makeTool({ execute, stateChanging: false, retrySafety: { kind: 'read-only' } });
    const state = makeState(tool, { signal: controller.signal });
    state.idempotencyKey = KEY;
    const end = await createExecuteStage({ random: () => 0.5 })(state, makeDeps());
    // The answer is the attempt's own end, not a second, unsent attempt's "cancelled before it was sent".
    expect(end).toMatchObject({ kind: 'refuse', error: { code: 'TIMEOUT' } });
    expect(end.kind === 'refuse' && end.error.message).toBe(ATTEMPT_CANCELLED);
    expect(seen).toHaveLength(1);
    expect(state.attempts).toHaveLength(1);
  });
});

describe('execute stage: what each attempt records', () => {
  it('records attempt number, start, duration and result, and tells the observer', async () => {
    const clock = new ManualClock(5_000);
    const observed: unknown[][] = [];
    let invoked = false;
    let answer: () => void = () => undefined;
    const execute = () => {
      invoked = true;
      return new Promise<never>((_, reject) => (answer = () => reject(http(500))));
    };
    const tool = makeTool({
      execute,
      stateChanging: false,
      retrySafety: { kind: 'read-only' },
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const state = makeState(tool);
    state.idempotencyKey = KEY;
    const deps = { ...makeDeps({ clock }), observer: { onAttempt: (...a: unknown[]) => observed.push(a) } };
    const done = createExecuteStage()(state, deps);
    while (!invoked) await new Promise((r) => setImmediate(r));
    await clock.advance(30);
    answer();
    await done;
    expect(state.attempts).toEqual([
      { attempt: 1, startedAtMs: 5_000, durationMs: 30, result: 'SERVER_ERROR' },
    ]);
    expect(observed).toEqual([['issue_refund', 1, 'SERVER_ERROR', 30]]);
  });

  it('an observer that throws changes nothing', async () => {
    const deps = {
      ...makeDeps(),
      observer: {
        onAttempt: () => {
          throw new Error('observer bug');
        },
      },
    };
    const state = makeState(makeTool());
    const ran = await runTail(state, deps);
    expect(ran.endedAt).toBe('all');
    expect(state.attempts).toHaveLength(1);
  });

  it('refuses INTERNAL when run before the call was claimed, without invoking the tool', async () => {
    const { seen, execute } = scripted([ok]);
    const end = await createExecuteStage()(makeState(makeTool({ execute })), makeDeps());
    expect(end).toMatchObject({ kind: 'refuse', error: { code: 'INTERNAL' } });
    expect(seen).toHaveLength(0);
  });
});

describe('execute stage: the UNRESOLVED answer and its record', () => {
  const UNRESOLVED_MESSAGE =
    'The outcome of this action is unknown; it will be reconciled. Do not repeat it; tell the user it is being checked.';

  it('says the outcome is unknown, not retryable, and records exactly that for duplicates', async () => {
    const { execute } = scripted([hang]);
    const deps = makeDeps();
    const ran = await runTail(
      makeState(makeTool({ execute, timeoutMs: 20, retrySafety: { kind: 'none' } })),
      deps,
    );
    expect(ran.end).toMatchObject({
      kind: 'finish',
      outcome: 'UNRESOLVED',
      error: { code: 'UNRESOLVED', message: UNRESOLVED_MESSAGE, retryable: false },
      reason: 'outcome unknown after TIMEOUT; will be reconciled',
    });
    const dup = await deps.store.claim(KEY, argumentsFingerprint(ARGS), 'b', 1000);
    expect(dup).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'UNRESOLVED', result: { code: 'UNRESOLVED', message: UNRESOLVED_MESSAGE } },
    });
  });

  it('refuses INTERNAL, naming the cause, when run without a resolved tool', async () => {
    const state = { ...makeState(makeTool()), tool: undefined, idempotencyKey: KEY };
    expect(await createExecuteStage()(state, makeDeps())).toMatchObject({
      kind: 'refuse',
      error: { code: 'INTERNAL', message: 'The tool was to run before it was resolved and claimed.' },
    });
  });
});

describe('execute stage: attempts that never reached the tool', () => {
  it('an open breaker or a passed deadline records no attempt', async () => {
    const state = makeState(makeTool(), { ctx: { deadlineMs: Date.now() - 1 } });
    await runTail(state, makeDeps());
    expect(state.attempts).toEqual([]);
    expect(state.toolInvocations).toBe(0);
  });

  it('a caller that gives up during the backoff wait gets the last real error, and no new attempt', async () => {
    const clock = new ManualClock(1_000);
    const controller = new AbortController();
    const { seen, execute } = scripted([() => Promise.reject(http(500)), ok]);
    const tool = makeTool({
      execute,
      stateChanging: false,
      retrySafety: { kind: 'read-only' },
      retry: { maxAttempts: 2, baseDelayMs: 400, maxDelayMs: 1_000 },
    });
    const state = makeState(tool, { signal: controller.signal });
    state.idempotencyKey = KEY;
    const done = createExecuteStage({ random: () => 0.5 })(state, makeDeps({ clock }));
    while (seen.length === 0) await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    controller.abort();
    await expect(done).resolves.toMatchObject({ kind: 'refuse', error: { code: 'SERVER_ERROR' } });
    expect(seen).toHaveLength(1);
    expect(state.attempts).toHaveLength(1);
  });
});
