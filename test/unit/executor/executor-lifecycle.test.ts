import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { createHarness, failingTool, stockTool, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('executor lifecycle and failure paths', () => {
  it('stop() lets a running call finish and publish before it resolves', async () => {
    const stock = stockTool({ delayMs: 300 });
    h = await createHarness([stock.tool]);
    const request = await h.request({ sku: 'A', seq: 1, delta: 1 });
    const executor = h.executor();
    await executor.start();
    await h.publishCalls([request]);
    while (stock.invocations.length === 0) await sleep(5);
    await executor.stop();
    expect(h.bus.endOffset(h.topics.results, 2)).toBe('1');
    const [result] = await h.read('results', 1);
    expect(result!.event.outcome).toBe('SUCCESS');
  });

  it('aborts calls still running at the hard shutdown deadline: UNRESOLVED, never failed', async () => {
    // A call that would run for ten minutes; the shutdown deadline and the publish grace are on a
    // manual clock, so only the test decides when they pass.
    const stock = stockTool({ delayMs: 600_000, timeoutMs: 900_000 });
    h = await createHarness([stock.tool]);
    const request = await h.request({ sku: 'A', seq: 1, delta: 1 });
    const clock = new ManualClock(Date.now());
    const executor = h.executor({ clock, settings: { shutdownTimeoutMs: 50 }, publishGraceMs: 2_000 });
    await executor.start();
    await h.publishCalls([request]);
    while (stock.invocations.length === 0) await sleep(5);
    let stopped = false;
    // stop() sets its two timers: the shutdown deadline and the end of the publish grace.
    const timersBefore = clock.pendingSleepers;
    const stopping = executor.stop().then(() => (stopped = true));
    await vi.waitFor(() => expect(clock.pendingSleepers).toBe(timersBefore + 2), {
      timeout: 20_000,
      interval: 5,
    });
    await clock.advance(49);
    await sleep(20);
    expect(stopped).toBe(false);
    // At the deadline the call is aborted, and stop() resolves once its result is out: the clock
    // never reaches the end of the publish grace.
    await clock.advance(1);
    await stopping;
    expect(stock.invocations).toHaveLength(1);
    const [result] = await h.read('results', 1);
    expect(result!.event.outcome).toBe('UNRESOLVED');
    const [dead] = await h.read('dlq', 1);
    expect(dead!.event.reason).toBe('UNRESOLVED');
  });

  it('does not abort a running call on rebalance, and the next owner does not run it again', async () => {
    const stock = stockTool({ delayMs: 300 });
    h = await createHarness([stock.tool], 2);
    const first = h.executor({ ownerId: 'exec-1' });
    await first.start();
    const requests = [];
    for (let seq = 1; seq <= 6; seq++) requests.push(await h.request({ sku: 'A', seq, delta: 1 }));
    await h.publishCalls(requests);
    while (stock.invocations.length === 0) await sleep(5);
    // A second member joins: every batch turns stale; the running call must still complete.
    await h.executor({ ownerId: 'exec-2' }).start();
    const results = await h.read('results', 6, 10_000);
    const byCall = new Map<string, string[]>();
    for (const { event } of results)
      byCall.set(event.callId, [...(byCall.get(event.callId) ?? []), event.outcome]);
    expect([...byCall.keys()].sort()).toEqual(requests.map((r) => r.callId).sort());
    expect(results[0]!.event.outcome).toBe('SUCCESS');
    expect(stock.invocations.map((i) => i.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('dead-letters a state-changing call that exhausted its retries, not a read-only one', async () => {
    const write = failingTool('write_thing', true, 503);
    const read = failingTool('read_thing', false, 503);
    h = await createHarness([write.tool, read.tool]);
    const w = await h.request({ sku: 'A', seq: 1, delta: 1 }, { tool: 'write_thing' });
    const r = await h.request({ sku: 'B', seq: 1, delta: 1 }, { tool: 'read_thing' });
    await h.publishCalls([w, r]);
    await h.executor().start();
    const results = await h.read('results', 2);
    for (const { event } of results)
      expect(event).toMatchObject({ outcome: 'EXECUTION_ERROR', error: { code: 'SERVER_ERROR' } });
    const [dead] = await h.read('dlq', 1);
    expect(dead!.event).toMatchObject({ reason: 'EXHAUSTED', callId: w.callId, errorCode: 'SERVER_ERROR' });
    expect(JSON.parse(dead!.event.attemptsJson)).toHaveLength(2);
    await sleep(50);
    expect(h.bus.endOffset(h.topics.dlq, 0)).toBe('1');
    expect(write.calls()).toBe(2);
    expect(read.calls()).toBe(2);
  });

  it('answers a malformed envelope with MALFORMED_EVENT and dead-letters the producer bug', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool]);
    const request = await h.request({ sku: 'A', seq: 1, delta: 1 }, { taskId: '', idempotencyKey: 'tg1:z' });
    await h.publishCalls([request]);
    await h.executor().start();
    const [result] = await h.read('results', 1);
    expect(result!.event).toMatchObject({
      callId: request.callId,
      outcome: 'SCHEMA_INVALID',
      error: { code: 'MALFORMED_EVENT' },
    });
    const [dead] = await h.read('dlq', 1);
    expect(dead!.event).toMatchObject({ reason: 'POISON', callId: request.callId });
    expect(dead!.event.errorMessage).toMatch(/taskId/);
    expect(stock.invocations).toHaveLength(0);
  });

  it('turns a defect in the pipeline into a POISON dead letter instead of stalling the partition', async () => {
    const stock = stockTool();
    h = await createHarness([stock.tool], 1);
    const requests = [
      await h.request({ sku: 'A', seq: 1, delta: 1 }),
      await h.request({ sku: 'A', seq: 2, delta: 1 }),
    ];
    await h.publishCalls(requests);
    let runs = 0;
    const broken = {
      run: () => {
        runs += 1;
        return runs === 1 ? Promise.reject(new Error('bug')) : Promise.reject(new Error('bug again'));
      },
    };
    // The runner the factory builds is replaced by the defective one (fault injection).
    await h.executor({ aroundRuns: () => broken }).start();
    const dead = await h.read('dlq', 2);
    expect(dead.map((d) => d.event.originalOffset)).toEqual(['0', '1']);
    expect(dead.every((d) => d.event.reason === 'POISON')).toBe(true);
    expect(h.logs.some((l) => l.level === 'error' && l.msg?.includes('defect'))).toBe(true);
  });
});

describe('createExecutor with shared breakers', () => {
  it("a breaker tripped through one executor is open for the other, and only its creator's stop() shuts it down", async () => {
    const dead = failingTool('read_stock', false, 503, 1);
    h = await createHarness([dead.tool], 1);
    const owner = h.executor({
      ownerId: 'exec-owner',
      settings: { breaker: { errorPercent: 50, volume: 2, resetMs: 60_000 } },
    });
    const borrower = h.executor({ ownerId: 'exec-borrower', breakers: owner.breakers });
    expect(borrower.breakers).toBe(owner.breakers);

    const failing = [
      await h.request({ sku: 'A', seq: 1, delta: 0 }, { tool: 'read_stock' }),
      await h.request({ sku: 'B', seq: 1, delta: 0 }, { tool: 'read_stock' }),
    ];
    await h.publishCalls(failing);
    await borrower.start();
    const first = await h.read('results', 2);
    for (const { event } of first) expect(event.error?.code).toBe('SERVER_ERROR');
    expect(dead.calls()).toBe(2);
    await borrower.stop();
    // The borrower's stop() left the shared breakers running, tripped.
    expect(owner.breakers.state('read_stock-api')).toBe('open');
    await expect(owner.breakers.run('other-api', () => Promise.resolve('ran'))).resolves.toBe('ran');

    const later = await h.request({ sku: 'C', seq: 1, delta: 0 }, { tool: 'read_stock' });
    await h.publishCalls([later]);
    await owner.start();
    const all = await h.read('results', 3);
    expect(all.find((r) => r.event.callId === later.callId)?.event.error?.code).toBe('BREAKER_OPEN');
    expect(dead.calls()).toBe(2);

    await owner.stop();
    await expect(owner.breakers.run('other-api', () => Promise.resolve('ran'))).rejects.toMatchObject({
      code: 'BREAKER_OPEN',
    });
  });

  it("an executor's own breakers keep running until its stop(), which shuts them down", async () => {
    h = await createHarness([failingTool('read_stock', false, 503).tool]);
    const executor = h.executor();
    await expect(executor.breakers.run('read_stock-api', () => Promise.resolve('ran'))).resolves.toBe('ran');
    await executor.stop();
    await expect(executor.breakers.run('read_stock-api', () => Promise.resolve('ran'))).rejects.toMatchObject(
      {
        code: 'BREAKER_OPEN',
      },
    );
  });
});
