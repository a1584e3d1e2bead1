import { describe, expect, it } from 'vitest';
import { runBatch, type BatchCall, type RunCall } from '../../../libs/batch/run-batch.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import type { ToolCallResult } from '../../../libs/core/types.js';
import { ctxFor } from '../../helpers/tool-calls.js';

const ctx = ctxFor({ id: 'u', tenant: 't1', kind: 'agent', scopes: [], roles: [] }, { taskId: 'task' });

function calls(specs: { sku?: string; ms?: number; fail?: boolean }[]): BatchCall[] {
  return specs.map((spec, index) => ({
    call: { id: `c${index}`, name: 'update_inventory', arguments: { ...spec } },
    ctx: { ...ctx, index },
  }));
}

const bySku = (call: BatchCall['call']) =>
  typeof call.arguments.sku === 'string' ? `t1:inv:${call.arguments.sku}` : undefined;

const result = (callId: string, outcome: ToolCallResult['outcome'] = 'SUCCESS'): ToolCallResult => ({
  callId,
  tool: 'update_inventory',
  outcome,
  toolInvocations: 1,
});

/** A runner whose calls each take `ms` of the manual clock, recording start/end order and concurrency. */
function instrumented(clock: ManualClock) {
  const log: string[] = [];
  let running = 0;
  let maxRunning = 0;
  const aborted: string[] = [];
  const run: RunCall = async (call, _ctx, signal) => {
    running += 1;
    maxRunning = Math.max(maxRunning, running);
    log.push(`start ${call.id}`);
    try {
      await clock.sleep(Number(call.arguments.ms ?? 10), signal);
    } catch {
      aborted.push(call.id);
      throw new Error('aborted');
    } finally {
      running -= 1;
    }
    log.push(`end ${call.id}`);
    return result(call.id, call.arguments.fail === true ? 'EXECUTION_ERROR' : 'SUCCESS');
  };
  return { run, log, aborted, max: () => maxRunning };
}

async function settle(
  clock: ManualClock,
  promise: Promise<unknown>,
  stepMs = 1,
  limit = 10_000,
): Promise<void> {
  let done = false;
  void promise.finally(() => (done = true));
  for (let i = 0; i < limit && !done; i++) await clock.advance(stepMs);
}

/**
 * Runs `specs` as a batch through an {@link instrumented} runner on a manual clock (conflict key: the
 * SKU), moving the clock until the batch settles; returns its items with the runner's records.
 */
async function runOnClock(
  specs: Parameters<typeof calls>[0],
  options: { concurrency: number; batchDeadlineMs: number },
) {
  const clock = new ManualClock(0);
  const runner = instrumented(clock);
  const pending = runBatch(calls(specs), runner.run, { ...options, conflictKey: bySku, clock });
  await settle(clock, pending);
  return { items: await pending, clock, ...runner };
}

describe('runBatch', () => {
  it('returns one result per call, in input order', async () => {
    const { items } = await runOnClock([{ ms: 30 }, { ms: 10 }, { ms: 20 }], {
      concurrency: 5,
      batchDeadlineMs: 1_000,
    });
    expect(items.map((i) => (i.status === 'completed' ? i.result.callId : i.status))).toEqual([
      'c0',
      'c1',
      'c2',
    ]);
  });

  it('calls with the same conflict key run one at a time in input order; other keys run alongside', async () => {
    const { log } = await runOnClock(
      [
        { sku: 'A', ms: 30 },
        { sku: 'B', ms: 5 },
        { sku: 'A', ms: 5 },
        { sku: 'A', ms: 5 },
        { sku: 'B', ms: 5 },
      ],
      { concurrency: 8, batchDeadlineMs: 1_000 },
    );
    const a = log.filter((l) => ['c0', 'c2', 'c3'].includes(l.split(' ')[1]!));
    expect(a).toEqual(['start c0', 'end c0', 'start c2', 'end c2', 'start c3', 'end c3']);
    // B's first call started before A's first call ended: different keys are concurrent.
    expect(log.indexOf('start c1')).toBeLessThan(log.indexOf('end c0'));
    expect(log.indexOf('end c1')).toBeLessThan(log.indexOf('start c4'));
  });

  it('never runs more than `concurrency` calls at once', async () => {
    const { items, max } = await runOnClock(
      Array.from({ length: 40 }, (_, i) => ({ ms: 5 + (i % 7) })),
      { concurrency: 4, batchDeadlineMs: 10_000 },
    );
    expect(items.every((i) => i.status === 'completed')).toBe(true);
    expect(max()).toBe(4);
  });

  it('at the deadline: finished calls keep their results, running ones are still-running, queued ones not-started', async () => {
    const { items, aborted, clock } = await runOnClock(
      [
        { ms: 10 }, // done before the deadline
        { ms: 500, sku: 'A' }, // running at the deadline
        { ms: 10, sku: 'A' }, // queued behind it
        { ms: 20, fail: true }, // a failure, done before the deadline
      ],
      { concurrency: 4, batchDeadlineMs: 100 },
    );
    expect(items.map((i) => i.status)).toEqual(['completed', 'still-running', 'not-started', 'completed']);
    expect(items[0]).toMatchObject({ result: { callId: 'c0', outcome: 'SUCCESS' } });
    expect(items[3]).toMatchObject({ result: { callId: 'c3', outcome: 'EXECUTION_ERROR' } });
    // The running call was told to stop; the queued one never began.
    await clock.advance(1);
    expect(aborted).toEqual(['c1']);
  });

  it('a runner that throws is reported for that call only', async () => {
    const clock = new ManualClock(0);
    const run: RunCall = (call) => {
      if (call.id === 'c1') throw new Error('defect');
      return Promise.resolve(result(call.id));
    };
    const items = await runBatch(calls([{}, {}, {}]), run, {
      concurrency: 2,
      batchDeadlineMs: 100,
      conflictKey: bySku,
      clock,
    });
    expect(items.map((i) => i.status)).toEqual(['completed', 'crashed', 'completed']);
  });

  it('a cancelled batch starts nothing', async () => {
    const clock = new ManualClock(0);
    let started = 0;
    const controller = new AbortController();
    controller.abort();
    const items = await runBatch(
      calls([{}, {}]),
      (call) => Promise.resolve(((started += 1), result(call.id))),
      { concurrency: 2, batchDeadlineMs: 100, conflictKey: bySku, clock, signal: controller.signal },
    );
    expect(items.map((i) => i.status)).toEqual(['not-started', 'not-started']);
    expect(started).toBe(0);
  });

  it('an empty batch is an empty answer', async () => {
    expect(
      await runBatch([], () => Promise.reject(new Error('no')), {
        concurrency: 1,
        batchDeadlineMs: 1,
        conflictKey: bySku,
        clock: new ManualClock(0),
      }),
    ).toEqual([]);
  });
});
