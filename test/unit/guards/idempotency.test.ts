import { describe, expect, it } from 'vitest';
import { MemoryIdempotencyStore } from '../../../libs/adapters/memory/index.js';
import { argumentsFingerprint, idempotencyKey } from '../../../libs/core/idempotency-key.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { claimLeaseMs, idempotencyStage } from '../../../libs/guards/idempotency.js';
import type { ClaimResult, IdempotencyStore } from '../../../libs/ports/idempotency-store.js';
import { makeDeps, makeState, makeTool, runTail, wrapStore } from './stage-harness.js';

const ARGS = { orderId: 'O-5512', amount: 49.99 };
const COORDS = { tenant: 't1', taskId: 'task-1', step: 0, index: 0 };
const KEY = idempotencyKey(COORDS, 'issue_refund', ARGS);
const FP = argumentsFingerprint(ARGS);

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

describe('idempotency stage: the key', () => {
  it('computes the key from the verified context and raw arguments when none was provided', async () => {
    const state = makeState(makeTool());
    const result = await idempotencyStage(state, makeDeps());
    expect(result).toEqual({ kind: 'continue' });
    expect(state.idempotencyKey).toBe(KEY);
    expect(state.resourceKey).toBe('t1:task:task-1');
  });

  it('accepts a provided key that matches the call', async () => {
    const state = makeState(makeTool(), { providedKey: KEY });
    expect(await idempotencyStage(state, makeDeps())).toEqual({ kind: 'continue' });
    expect(state.idempotencyKey).toBe(KEY);
  });

  it('refuses a provided key that belongs to another call, without touching the store', async () => {
    const { store, calls } = counting(new MemoryIdempotencyStore(systemClock));
    const otherCallsKey = idempotencyKey({ ...COORDS, index: 1 }, 'issue_refund', ARGS);
    const state = makeState(makeTool(), { providedKey: otherCallsKey });
    const result = await idempotencyStage(state, makeDeps({ store }));
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
    await idempotencyStage(state, makeDeps());
    expect(state.resourceKey).toBe('t1:order:O-5512');
  });
});

describe('idempotency stage: claim answers', () => {
  it('read-only tools pass with reason "read-only" and never claim', async () => {
    const { store, calls } = counting(new MemoryIdempotencyStore(systemClock));
    const tool = makeTool({ stateChanging: false, retrySafety: { kind: 'read-only' } });
    const state = makeState(tool);
    expect(await idempotencyStage(state, makeDeps({ store }))).toEqual({
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
    await idempotencyStage(makeState(tool), makeDeps({ store }));
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
    const result = await idempotencyStage(makeState(makeTool()), deps);
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
    const pending = idempotencyStage(state, deps);
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
    const pending = idempotencyStage(makeState(makeTool()), deps);
    await new Promise((r) => setTimeout(r, 30));
    await deps.store.release(KEY, 'executor-z');
    await expect(pending).resolves.toEqual({ kind: 'continue' });
  });

  it('takes over when the owner dies (its lease runs out) and marks the call for the safe path', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 60);
    const state = makeState(makeTool());
    const result = await idempotencyStage(state, deps);
    expect(result).toMatchObject({ kind: 'continue', reason: expect.stringContaining('safe path') });
    expect(state.takenOver).toBe(true);
  });

  it('stops waiting when the caller gives up: UNRESOLVED, nothing run', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 10_000);
    const controller = new AbortController();
    const pending = idempotencyStage(makeState(makeTool(), { signal: controller.signal }), deps);
    setTimeout(() => controller.abort(), 30);
    await expect(pending).resolves.toMatchObject({ kind: 'finish', outcome: 'UNRESOLVED' });
  });

  it('stops waiting at the call deadline', async () => {
    const deps = makeDeps();
    await deps.store.claim(KEY, FP, 'executor-z', 10_000);
    const state = makeState(makeTool(), { ctx: { deadlineMs: Date.now() + 40 } });
    await expect(idempotencyStage(state, deps)).resolves.toMatchObject({
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
    const pending = idempotencyStage(
      makeState(makeTool(), { signal: controller.signal }),
      makeDeps({ store }),
    );
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    await pending;
    // 10, 20, 40, 80 ms … : a handful of polls in 200 ms, not thousands.
    expect(answers.length).toBeGreaterThan(1);
    expect(answers.length).toBeLessThan(10);
    expect(new Set(answers)).toEqual(new Set(['in-flight']));
  });
});
