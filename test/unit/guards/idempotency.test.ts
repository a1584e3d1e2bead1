import { describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from '../../../libs/adapters/memory/index.js';
import { argumentsFingerprint, idempotencyKey } from '../../../libs/core/idempotency-key.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { claimLeaseMs, claimStage, idempotencyLayer } from '../../../libs/guards/idempotency.js';
import { STAGES } from '../../../libs/guards/stages.js';
import type { ClaimResult, IdempotencyStore } from '../../../libs/ports/idempotency-store.js';
import { makeDeps, makeState, makeTool, runTail, wrapStore } from './stage-harness.js';

const ARGS = { orderId: 'O-5512', amount: 49.99 };
const COORDS = { tenant: 't1', taskId: 'task-1', step: 0, index: 0 };
const KEY = idempotencyKey(COORDS, 'issue_refund', ARGS);
const FP = argumentsFingerprint(ARGS);
const T0 = 1_700_000_000_000;

/** Wraps a store and counts calls, to prove which paths touch it. */
function counting(inner: IdempotencyStore) {
  const calls = { claim: 0, complete: 0, release: 0 };
  const store = wrapStore(inner, {
    claim: (...a) => {
      calls.claim += 1;
      return inner.claim(...a);
    },
    complete: (...a) => {
      calls.complete += 1;
      return inner.complete(...a);
    },
    release: (...a) => {
      calls.release += 1;
      return inner.release(...a);
    },
  });
  return { store, calls };
}

describe('idempotency layer: its place in the pipeline', () => {
  it('is the step named idempotency in the one ordered list, the layer that wraps execute and validate-output', () => {
    const names = STAGES.map((s) => s.name);
    expect(names.slice(names.indexOf('idempotency'))).toEqual(['idempotency', 'execute', 'validate-output']);
    expect(STAGES).toContain(idempotencyLayer);
    expect(idempotencyLayer.name).toBe('idempotency');
    expect('wrap' in idempotencyLayer).toBe(true);
  });
});

describe('idempotency stage: the key', () => {
  it('computes the key from the verified context and raw arguments when none was provided', async () => {
    const state = makeState(makeTool());
    const result = await claimStage(state, makeDeps());
    expect(result).toEqual({ kind: 'continue' });
    expect(state.idempotencyKey).toBe(KEY);
    expect(state.resourceKey).toBe('t1:task:task-1');
  });

  it('accepts a provided key that matches the call', async () => {
    const state = makeState(makeTool(), { providedKey: KEY });
    expect(await claimStage(state, makeDeps())).toEqual({ kind: 'continue' });
    expect(state.idempotencyKey).toBe(KEY);
  });

  it('refuses a provided key that belongs to another call, without touching the store', async () => {
    const { store, calls } = counting(new MemoryIdempotencyStore(systemClock));
    const otherCallsKey = idempotencyKey({ ...COORDS, index: 1 }, 'issue_refund', ARGS);
    const state = makeState(makeTool(), { providedKey: otherCallsKey });
    const result = await claimStage(state, makeDeps({ store }));
    expect(result).toMatchObject({ kind: 'refuse', error: { code: 'MALFORMED_EVENT' } });
    expect(calls.claim).toBe(0);
    expect(state.idempotencyKey).toBeUndefined();
  });

  it('two distinct calls with equal arguments in one turn get different keys and both run', async () => {
    const deps = makeDeps();
    let runs = 0;
    const tool = makeTool({
      execute: () => {
        runs += 1;
        return Promise.resolve({ orderId: 'O-5512', status: 'refunded' });
      },
    });
    const first = await runTail(makeState(tool, { ctx: { index: 0 } }), deps);
    const second = await runTail(makeState(tool, { ctx: { index: 1 } }), deps);
    expect([first.endedAt, second.endedAt]).toEqual(['all', 'all']);
    expect(runs).toBe(2);
    expect(first.state.idempotencyKey).not.toBe(second.state.idempotencyKey);
  });

  it('uses the tool conflict key as the resource key', async () => {
    const tool = makeTool({ conflictKey: (args, ctx) => `${ctx.tenant}:order:${String(args.orderId)}` });
    const state = makeState(tool);
    await claimStage(state, makeDeps());
    expect(state.resourceKey).toBe('t1:order:O-5512');
  });
});

describe('idempotency stage: claim answers', () => {
  it('read-only tools pass with reason "read-only" and never claim', async () => {
    const { store, calls } = counting(new MemoryIdempotencyStore(systemClock));
    const tool = makeTool({ stateChanging: false, retrySafety: { kind: 'read-only' } });
    const state = makeState(tool);
    expect(await claimStage(state, makeDeps({ store }))).toEqual({
      kind: 'continue',
      reason: 'read-only',
    });
    expect(calls.claim).toBe(0);
    expect(state.idempotencyKey).toBe(KEY);
  });

  it('claims with a lease covering every attempt, the backoff and the margin', async () => {
    const leases: number[] = [];
    const inner = new MemoryIdempotencyStore(systemClock);
    const store = wrapStore(inner, {
      claim: (k, f, o, lease) => {
        leases.push(lease);
        return inner.claim(k, f, o, lease);
      },
    });
    const tool = makeTool({ timeoutMs: 1_000, retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 150 } });
    await claimStage(makeState(tool), makeDeps({ store }));
    // 3 × 1000 + (100 + 150) + 1000 margin
    expect(leases).toEqual([4_250]);
    expect(claimLeaseMs(tool, { resultTtlMs: 1, leaseMarginMs: 1_000 })).toBe(4_250);
  });

  it('completed → DUPLICATE with the stored result; the tool is not run', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 5_000);
    await deps.store.complete(
      KEY,
      'executor-z',
      { outcome: 'SUCCESS', result: { orderId: 'O-5512', status: 'refunded' }, completedAtMs: 1 },
      60_000,
    );
    let runs = 0;
    const state = makeState(
      makeTool({ execute: () => Promise.resolve(((runs += 1), { orderId: 'x', status: 'y' })) }),
    );
    const ran = await runTail(state, deps);
    expect(ran.endedAt).toBe('idempotency');
    expect(ran.end).toEqual({
      kind: 'finish',
      outcome: 'DUPLICATE',
      payload: { orderId: 'O-5512', status: 'refunded' },
      reason: expect.any(String),
    });
    expect(runs).toBe(0);
    expect(state.toolInvocations).toBe(0);
  });

  it('completed with outcome UNRESOLVED → UNRESOLVED again, never re-run', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 5_000);
    await deps.store.complete(
      KEY,
      'executor-z',
      { outcome: 'UNRESOLVED', result: null, completedAtMs: 1 },
      60_000,
    );
    const ran = await runTail(makeState(makeTool()), deps);
    expect(ran.end).toMatchObject({ kind: 'finish', outcome: 'UNRESOLVED', error: { code: 'UNRESOLVED' } });
  });

  it('conflict → IDEMPOTENCY_CONFLICT', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, 'a-different-fingerprint', 'executor-z', 5_000);
    const result = await claimStage(makeState(makeTool()), deps);
    expect(result).toMatchObject({ kind: 'refuse', error: { code: 'IDEMPOTENCY_CONFLICT' } });
  });

  it('an unreachable store fails closed: DEPENDENCY_UNAVAILABLE and the tool never runs', async () => {
    const down = wrapStore(new MemoryIdempotencyStore(systemClock), {
      claim: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379')),
      complete: () => Promise.reject(new Error('down')),
      release: () => Promise.reject(new Error('down')),
    });
    let runs = 0;
    const tool = makeTool({ execute: () => Promise.resolve(((runs += 1), { orderId: 'x', status: 'y' })) });
    const ran = await runTail(makeState(tool), makeDeps({ store: down }));
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'DEPENDENCY_UNAVAILABLE' } });
    expect(runs).toBe(0);
  });
});

describe('idempotency stage: a concurrent duplicate in flight elsewhere', () => {
  it('waits for the owner to finish and answers DUPLICATE with its result', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 10_000);
    const state = makeState(makeTool());
    const pending = claimStage(state, deps);
    await new Promise((r) => setTimeout(r, 40));
    await deps.store.complete(
      KEY,
      'executor-z',
      { outcome: 'SUCCESS', result: { orderId: 'O-5512', status: 'refunded' }, completedAtMs: 1 },
      60_000,
    );
    await expect(pending).resolves.toMatchObject({
      kind: 'finish',
      outcome: 'DUPLICATE',
      payload: { orderId: 'O-5512', status: 'refunded' },
    });
  });

  it('claims the key when the owner releases it (its attempt definitely failed)', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 10_000);
    const pending = claimStage(makeState(makeTool()), deps);
    await new Promise((r) => setTimeout(r, 30));
    await deps.store.release(KEY, 'executor-z');
    await expect(pending).resolves.toEqual({ kind: 'continue' });
  });

  it('takes over when the owner dies (its lease runs out) and marks the call for the safe path', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 60);
    const state = makeState(makeTool());
    const result = await claimStage(state, deps);
    expect(result).toMatchObject({ kind: 'continue', reason: expect.stringContaining('safe path') });
    expect(state.takenOver).toBe(true);
  });

  it('stops waiting when the caller gives up: UNRESOLVED, nothing run', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 10_000);
    const controller = new AbortController();
    const pending = claimStage(makeState(makeTool(), { signal: controller.signal }), deps);
    setTimeout(() => controller.abort(), 30);
    await expect(pending).resolves.toMatchObject({ kind: 'finish', outcome: 'UNRESOLVED' });
  });

  it('stops waiting at the call deadline', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 10_000);
    const state = makeState(makeTool(), { ctx: { deadlineMs: Date.now() + 40 } });
    await expect(claimStage(state, deps)).resolves.toMatchObject({
      kind: 'finish',
      outcome: 'UNRESOLVED',
    });
  });

  it('polls the store with growing waits rather than spinning', async () => {
    const answers: ClaimResult['kind'][] = [];
    const inner = new MemoryIdempotencyStore(systemClock);
    await inner.claim(KEY, FP, 'executor-z', 10_000);
    const store = wrapStore(inner, {
      claim: async (...a) => {
        const r = await inner.claim(...a);
        answers.push(r.kind);
        return r;
      },
    });
    const controller = new AbortController();
    const pending = claimStage(makeState(makeTool(), { signal: controller.signal }), makeDeps({ store }));
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    await pending;
    // 10, 20, 40, 80 ms … : a handful of polls in 200 ms, not thousands.
    expect(answers.length).toBeGreaterThan(1);
    expect(answers.length).toBeLessThan(10);
    expect(new Set(answers)).toEqual(new Set(['in-flight']));
  });
});

describe('idempotency stage: the lease', () => {
  it('a status-check tool also covers its checks: one settling before the first send and after each', () => {
    const retry = { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 150 };
    const settings = { resultTtlMs: 1, leaseMarginMs: 1_000 };
    const check = () => Promise.resolve({ state: 'unknown' as const });
    const plain = makeTool({ timeoutMs: 1_000, retry });
    const checked = makeTool({ timeoutMs: 1_000, retry, retrySafety: { kind: 'status-check', check } });
    // 3 × 1000 (+ 4 × 1000 for the checks) + (100 + 150) backoff + 1000 margin
    expect(claimLeaseMs(plain, settings)).toBe(4_250);
    expect(claimLeaseMs(checked, settings)).toBe(8_250);
    const settling = makeTool({
      timeoutMs: 1_000,
      retry,
      retrySafety: { kind: 'status-check', check, settleMs: 500 },
    });
    // Each settling waits up to settleMs more.
    expect(claimLeaseMs(settling, settings)).toBe(8_250 + 4 * 500);
  });

  it('rounds a fractional lease up to a whole millisecond', () => {
    const tool = makeTool({ timeoutMs: 10.2, retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 } });
    expect(claimLeaseMs(tool, { resultTtlMs: 1, leaseMarginMs: 0.5 })).toBe(11);
  });
});

describe('idempotency stage: a duplicate is answered from the stored record', () => {
  async function completedWith(outcome: string, result: unknown) {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 5_000);
    await deps.store.complete(KEY, 'executor-z', { outcome, result, completedAtMs: 1 }, 60_000);
    let runs = 0;
    const tool = makeTool({ execute: () => Promise.resolve(((runs += 1), { orderId: 'x', status: 'y' })) });
    const ran = await runTail(makeState(tool), deps);
    return { end: ran.end, endedAt: ran.endedAt, runs };
  }

  it('a duplicate of a refused call repeats the stored refusal, not UNRESOLVED', async () => {
    const { end, endedAt, runs } = await completedWith('EXECUTION_ERROR', {
      code: 'BAD_OUTPUT',
      message: 'The tool answered with output that does not match its schema.',
    });
    expect(endedAt).toBe('idempotency');
    expect(end).toMatchObject({
      kind: 'finish',
      outcome: 'EXECUTION_ERROR',
      error: {
        code: 'BAD_OUTPUT',
        message: 'The tool answered with output that does not match its schema.',
        retryable: false,
      },
      reason: 'duplicate of an earlier call whose result was refused; not run again',
    });
    expect(runs).toBe(0);
  });

  it.each([
    ['an unknown code', { code: 'NOT_A_CODE', message: 'm' }, 'm'],
    ['no code', { message: 'm' }, 'm'],
    ['no message', { code: 'BAD_OUTPUT' }, undefined],
    ['a null result', null, undefined],
  ])('a stored refusal with %s is repeated, never run', async (_, result, message) => {
    const { end, runs } = await completedWith('EXECUTION_ERROR', result);
    const code = (result as { code?: string } | null)?.code === 'BAD_OUTPUT' ? 'BAD_OUTPUT' : 'INTERNAL';
    expect(end).toMatchObject({
      kind: 'finish',
      error: {
        code,
        message: message ?? 'An earlier identical call failed after it ran; it is not run again.',
        retryable: false,
      },
    });
    expect(runs).toBe(0);
  });

  it('a duplicate of a duplicate returns the stored payload as DUPLICATE', async () => {
    const { end, runs } = await completedWith('DUPLICATE', { orderId: 'O-5512', status: 'refunded' });
    expect(end).toEqual({
      kind: 'finish',
      outcome: 'DUPLICATE',
      payload: { orderId: 'O-5512', status: 'refunded' },
      reason: 'duplicate of an earlier call; returning its result',
    });
    expect(runs).toBe(0);
  });

  it('a duplicate of an UNRESOLVED call says so and asks not to repeat it', async () => {
    const { end, runs } = await completedWith('UNRESOLVED', null);
    expect(end).toMatchObject({
      kind: 'finish',
      outcome: 'UNRESOLVED',
      error: { code: 'UNRESOLVED', message: expect.stringContaining('Do not repeat it') },
      reason: 'duplicate of an earlier call whose outcome is unknown; not run again',
    });
    expect(runs).toBe(0);
  });
});

describe('idempotency stage: tombstones make an expired record visible', () => {
  function tombstones(markedBefore: boolean | Error) {
    const marks: { key: string; ttlMs: number }[] = [];
    return {
      marks,
      store: {
        mark: (key: string, ttlMs: number) => {
          marks.push({ key, ttlMs });
          return markedBefore instanceof Error ? Promise.reject(markedBefore) : Promise.resolve(markedBefore);
        },
        clear: () => Promise.resolve(),
      },
    };
  }

  it('a claim of a key marked before still runs, reported as a claim after expiry', async () => {
    const t = tombstones(true);
    const expired: string[] = [];
    const deps = {
      ...makeDeps(),
      tombstones: t.store,
      observer: { onClaimAfterExpiry: (tool: string) => expired.push(tool) },
    };
    const result = await claimStage(makeState(makeTool()), deps);
    expect(result).toEqual({
      kind: 'continue',
      reason:
        'an identical call was claimed before, but its idempotency record expired (older than the ' +
        'retention): running it again',
    });
    expect(expired).toEqual(['issue_refund']);
    expect(t.marks).toEqual([{ key: KEY, ttlMs: 30 * 24 * 3_600_000 }]);
  });

  it('marks with the configured tombstone ttl', async () => {
    const t = tombstones(false);
    const base = makeDeps();
    const deps = { ...base, tombstones: t.store, settings: { ...base.settings, tombstoneTtlMs: 5_000 } };
    expect(await claimStage(makeState(makeTool()), deps)).toEqual({ kind: 'continue' });
    expect(t.marks).toEqual([{ key: KEY, ttlMs: 5_000 }]);
  });

  it('a failing tombstone store or observer changes no decision', async () => {
    const down = { ...makeDeps(), tombstones: tombstones(new Error('down')).store };
    expect(await claimStage(makeState(makeTool()), down)).toEqual({ kind: 'continue' });
    const throwing = {
      ...makeDeps(),
      tombstones: tombstones(true).store,
      observer: {
        onClaimAfterExpiry: () => {
          throw new Error('observer bug');
        },
      },
    };
    expect(await claimStage(makeState(makeTool()), throwing)).toMatchObject({ kind: 'continue' });
  });

  it('a read-only tool marks nothing', async () => {
    const t = tombstones(false);
    const tool = makeTool({ stateChanging: false, retrySafety: { kind: 'read-only' } });
    await claimStage(makeState(tool), { ...makeDeps(), tombstones: t.store });
    expect(t.marks).toEqual([]);
  });
});

describe('idempotency stage: waiting for the owner, on a manual clock', () => {
  /** Lets the stage run up to its first sleep, so `advance` has a sleeper to wake. */
  async function untilAsleep(clock: ManualClock): Promise<void> {
    while (clock.pendingSleepers === 0) await new Promise((r) => setImmediate(r));
  }

  it('polls after 10, 20, 40 … ms, never more than 250 ms apart, and never past the lease', async () => {
    const clock = new ManualClock(T0);
    const inner = new MemoryIdempotencyStore(clock);
    await inner.claim(KEY, FP, 'executor-z', 1_000);
    const polls: number[] = [];
    const store = wrapStore(inner, {
      claim: (...a) => {
        polls.push(clock.now() - T0);
        return inner.claim(...a);
      },
    });
    const state = makeState(makeTool());
    const pending = claimStage(state, makeDeps({ store, clock }));
    await untilAsleep(clock);
    await clock.advance(1_001);
    await expect(pending).resolves.toMatchObject({ kind: 'continue' });
    expect(state.takenOver).toBe(true);
    // The first claim at 0, then polls; the last sleep ends just after the lease (1000 + 1).
    expect(polls).toEqual([0, 10, 30, 70, 150, 310, 560, 810, 1001]);
  });

  it('an unreachable store while waiting refuses DEPENDENCY_UNAVAILABLE', async () => {
    const clock = new ManualClock(T0);
    const inner = new MemoryIdempotencyStore(clock);
    await inner.claim(KEY, FP, 'executor-z', 1_000);
    let claims = 0;
    const store = wrapStore(inner, {
      claim: (...a) => {
        claims += 1;
        return claims === 1 ? inner.claim(...a) : Promise.reject(new Error('connection lost'));
      },
    });
    const pending = claimStage(makeState(makeTool()), makeDeps({ store, clock }));
    await untilAsleep(clock);
    await clock.advance(10);
    await expect(pending).resolves.toMatchObject({
      kind: 'refuse',
      error: { code: 'DEPENDENCY_UNAVAILABLE', retryable: true },
    });
  });

  it('a store that fails on the first claim refuses without waiting', async () => {
    const store = wrapStore(new MemoryIdempotencyStore(systemClock), {
      claim: () => Promise.reject(new Error('connection lost')),
    });
    await expect(claimStage(makeState(makeTool()), makeDeps({ store }))).resolves.toMatchObject({
      kind: 'refuse',
      error: {
        code: 'DEPENDENCY_UNAVAILABLE',
        message: 'The idempotency store is unavailable, so this action was not run. Try again shortly.',
      },
    });
  });
});

describe('idempotency stage: what each refusal and stop says', () => {
  it('a foreign key is MALFORMED_EVENT with a sentence naming what the key covers', async () => {
    const otherCallsKey = idempotencyKey({ ...COORDS, index: 1 }, 'issue_refund', ARGS);
    const result = await claimStage(makeState(makeTool(), { providedKey: otherCallsKey }), makeDeps());
    expect(result).toMatchObject({
      kind: 'refuse',
      error: {
        code: 'MALFORMED_EVENT',
        message:
          'The idempotency key does not belong to this call (task, step, position, tool and arguments).',
      },
    });
  });

  it('a conflict says the key was used with other arguments', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, 'a-different-fingerprint', 'executor-z', 5_000);
    expect(await claimStage(makeState(makeTool()), deps)).toMatchObject({
      error: {
        code: 'IDEMPOTENCY_CONFLICT',
        message: 'The same idempotency key was already used with different arguments.',
      },
    });
  });

  it('arguments that are not JSON data are refused SCHEMA_INVALID before any claim', async () => {
    const { store, calls } = counting(new MemoryIdempotencyStore(systemClock));
    const state = makeState(makeTool(), { args: { orderId: 'O-1', amount: Number.NaN } });
    expect(await claimStage(state, makeDeps({ store }))).toMatchObject({
      kind: 'refuse',
      error: { code: 'SCHEMA_INVALID' },
    });
    expect(calls.claim).toBe(0);
  });

  it('refuses INTERNAL when run before the tool was resolved', async () => {
    const state = { ...makeState(makeTool()), tool: undefined };
    expect(await claimStage(state, makeDeps())).toEqual({
      kind: 'refuse',
      error: expect.objectContaining({
        code: 'INTERNAL',
        message: 'The idempotency check ran before the tool was resolved.',
      }),
    });
  });

  it('stopping the wait is UNRESOLVED: still running elsewhere, do not repeat', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 10_000);
    const controller = new AbortController();
    controller.abort();
    const result = await claimStage(makeState(makeTool(), { signal: controller.signal }), deps);
    expect(result).toMatchObject({
      kind: 'finish',
      outcome: 'UNRESOLVED',
      error: {
        code: 'UNRESOLVED',
        message: 'An identical call is still running; its outcome is not known yet. Do not repeat it.',
      },
      reason: 'an identical call is still running elsewhere; stopped waiting for it',
    });
  });

  it('an unreachable store keeps its error as the cause', async () => {
    const down = new Error('connection lost');
    const store = wrapStore(new MemoryIdempotencyStore(systemClock), { claim: () => Promise.reject(down) });
    const result = await claimStage(makeState(makeTool()), makeDeps({ store }));
    expect(result.kind === 'refuse' && result.error.cause).toBe(down);
  });

  it('a repeated refusal is final even for a code that is retryable by default', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 5_000);
    const result = { code: 'TIMEOUT', message: 'It was not carried out.' };
    await deps.store.complete(
      KEY,
      'executor-z',
      { outcome: 'EXECUTION_ERROR', result, completedAtMs: 1 },
      60_000,
    );
    expect(await claimStage(makeState(makeTool()), deps)).toMatchObject({
      kind: 'finish',
      error: { code: 'TIMEOUT', message: 'It was not carried out.', retryable: false },
    });
  });
});

describe('idempotency stage: the resource key', () => {
  it('falls back to the task when the conflict key throws', async () => {
    const tool = makeTool({
      conflictKey: () => {
        throw new Error('bad args');
      },
    });
    const state = makeState(tool);
    await claimStage(state, makeDeps());
    expect(state.resourceKey).toBe('t1:task:task-1');
  });

  it('falls back to the task when there are no validated arguments to key on', async () => {
    const fixed = makeTool({ conflictKey: (_args, ctx) => `${ctx.tenant}:fixed` });
    const state = { ...makeState(fixed), args: undefined };
    await claimStage(state, makeDeps());
    expect(state.resourceKey).toBe('t1:task:task-1');
  });
});

describe('idempotency stage: the wait releases what it held', () => {
  it('leaves no timer behind on the clock once the owner has answered', async () => {
    const clock = new ManualClock(T0);
    const store = new MemoryIdempotencyStore(clock);
    await store.claim(KEY, FP, 'executor-z', 1_000);
    const state = makeState(makeTool(), { ctx: { deadlineMs: T0 + 60_000 } });
    const pending = claimStage(state, makeDeps({ store, clock }));
    while (clock.pendingSleepers === 0) await new Promise((r) => setImmediate(r));
    await store.complete(KEY, 'executor-z', { outcome: 'SUCCESS', result: 1, completedAtMs: T0 }, 60_000);
    await clock.advance(10);
    await expect(pending).resolves.toMatchObject({ kind: 'finish', outcome: 'DUPLICATE' });
    expect(clock.pendingSleepers).toBe(0);
  });
});
