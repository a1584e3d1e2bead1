import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryIdempotencyStore } from '../../../libs/adapters/memory/index.js';
import { argumentsFingerprint, idempotencyKey } from '../../../libs/core/idempotency-key.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import type { ToolCallRequestedEvent } from '../../../libs/events/contracts.js';
import type { IdempotencyStore, StoredResult } from '../../../libs/ports/idempotency-store.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { unverifiedPrincipal } from '../../../libs/pipeline/call-state.js';
import { priorClaim, UNVERIFIED_MAY_HAVE_RUN_MESSAGE } from '../../../libs/guards/prior-claim.js';

const T0 = 1_800_000_000_000;
const ARGS = { sku: 'SKU-1', delta: 3 };
const COORDS = { tenant: 't1', taskId: 'task-1', step: 2, index: 0 };
const KEY = idempotencyKey(COORDS, 'adjust_stock', ARGS);
const FP = argumentsFingerprint(ARGS);
const DONE: StoredResult = { outcome: 'SUCCESS', result: { sku: 'SKU-1' }, completedAtMs: T0 };

function registry(): ToolRegistry {
  const tools = new ToolRegistry();
  for (const [name, stateChanging] of [
    ['adjust_stock', true],
    ['read_stock', false],
  ] as const) {
    tools.register(
      defineTool({
        name,
        version: '1.0.0',
        description: 'Adjust or read the stock count of one SKU.',
        input: z.object({ sku: z.string(), delta: z.number().int() }),
        output: z.object({ sku: z.string() }),
        scopes: [],
        owner: 'inventory',
        stateChanging,
        execute: () => Promise.reject(new Error('the probe never runs a tool')),
      }),
    );
  }
  return tools;
}

function request(fields: Partial<ToolCallRequestedEvent> = {}): ToolCallRequestedEvent {
  return {
    callId: 'call-1',
    providerCallId: 'toolu_1',
    tool: 'adjust_stock',
    toolVersion: null,
    argumentsJson: JSON.stringify(ARGS),
    ...COORDS,
    idempotencyKey: KEY,
    resourceKey: 't1:stock:SKU-1',
    principalAssertion: 'expired.assertion.sig',
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    replyTopic: 'results',
    replyPartition: 0,
    deadlineMs: null,
    requestedAtMs: T0 - 1_000,
    ...fields,
  };
}

/** The memory store on a manual clock, with a count of every write the probe could make. */
function store() {
  const clock = new ManualClock(T0);
  const inner = new MemoryIdempotencyStore(clock);
  const writes = { claim: 0, complete: 0, release: 0, settle: 0 };
  let peeks = 0;
  const counted: IdempotencyStore = {
    claim: (...a) => ((writes.claim += 1), inner.claim(...a)),
    complete: (...a) => ((writes.complete += 1), inner.complete(...a)),
    release: (...a) => ((writes.release += 1), inner.release(...a)),
    settle: (...a) => ((writes.settle += 1), inner.settle(...a)),
    peek: (key) => ((peeks += 1), inner.peek(key)),
  };
  return { clock, inner, counted, writes, peeks: () => peeks };
}

/** The probe as the verify-principal stage makes it, from the request's coordinates and arguments. */
const probe = (idempotency: IdempotencyStore, req = request()) =>
  priorClaim(
    { idempotency, tools: registry() },
    {
      call: {
        id: req.callId,
        name: req.tool,
        arguments: {},
        ...(req.toolVersion === null ? {} : { version: req.toolVersion }),
      },
      ctx: {
        principal: unverifiedPrincipal(req.tenant),
        tenant: req.tenant,
        taskId: req.taskId,
        step: req.step,
        index: req.index,
        traceId: req.traceId,
      },
      ...(req.idempotencyKey === '' ? {} : { providedKey: req.idempotencyKey }),
    },
    req.argumentsJson,
  );

describe('priorClaim: may an unverified call have run?', () => {
  it('not run when the key has no record: one peek, no write, and the key stays free', async () => {
    const s = store();
    expect(await probe(s.counted)).toEqual({ kind: 'none' });
    expect(s.peeks()).toBe(1);
    expect(s.writes).toEqual({ claim: 0, complete: 0, release: 0, settle: 0 });
    expect(await s.inner.claim(KEY, FP, 'executor-2', 60_000)).toMatchObject({ kind: 'claimed' });
  });

  it('may have run when an identical call completed; the record is untouched', async () => {
    const s = store();
    await s.inner.claim(KEY, FP, 'executor-1', 60_000);
    await s.inner.complete(KEY, 'executor-1', DONE, 86_400_000);
    const answer = await probe(s.counted);
    expect(answer).toMatchObject({
      kind: 'may-have-run',
      error: { code: 'UNRESOLVED', message: UNVERIFIED_MAY_HAVE_RUN_MESSAGE, retryable: false },
    });
    expect(answer.kind === 'may-have-run' && answer.reason).toMatch(/completed earlier \(SUCCESS\)/);
    expect(s.writes.claim).toBe(0);
    expect(await s.inner.peek(KEY)).toEqual({ kind: 'completed', fingerprint: FP, stored: DONE });
  });

  it('may have run while an identical call is in flight, and leaves its owner the key', async () => {
    const s = store();
    const held = await s.inner.claim(KEY, FP, 'executor-1', 60_000);
    const answer = await probe(s.counted);
    expect(answer.kind === 'may-have-run' && answer.reason).toMatch(/is in flight/);
    expect(s.writes).toEqual({ claim: 0, complete: 0, release: 0, settle: 0 });
    expect(await s.inner.claim(KEY, FP, 'executor-2', 60_000)).toEqual({
      kind: 'in-flight',
      owner: 'executor-1',
      leaseExpiresAtMs: held.kind === 'claimed' ? held.leaseExpiresAtMs : -1,
    });
    expect(await s.inner.complete(KEY, 'executor-1', DONE, 86_400_000)).toBe(true);
  });

  it('may have run when the owner stopped mid-call, and takes nothing over: the next claim does', async () => {
    const s = store();
    await s.inner.claim(KEY, FP, 'crashed', 1_000);
    await s.clock.advance(5_000);
    const answer = await probe(s.counted);
    expect(answer.kind === 'may-have-run' && answer.reason).toMatch(/stopped mid-call/);
    expect(s.writes.claim).toBe(0);
    expect(await s.inner.claim(KEY, FP, 'executor-2', 60_000)).toMatchObject({
      kind: 'taken-over',
      previousOwner: 'crashed',
    });
  });

  it('not run when the key holds other arguments (another call), or the tool is read-only', async () => {
    const s = store();
    await s.inner.claim(KEY, 'another-fingerprint', 'executor-1', 60_000);
    expect(await probe(s.counted)).toEqual({ kind: 'none' });

    const readOnly = request({
      tool: 'read_stock',
      idempotencyKey: idempotencyKey(COORDS, 'read_stock', ARGS),
    });
    expect(await probe(s.counted, readOnly)).toEqual({ kind: 'none' });
    expect(s.peeks()).toBe(1);
  });

  it('may have run when the store cannot be read', async () => {
    const s = store();
    const down: IdempotencyStore = {
      ...s.counted,
      peek: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379')),
    };
    const answer = await probe(down);
    expect(answer.kind === 'may-have-run' && answer.reason).toMatch(/could not say/);
  });
});
