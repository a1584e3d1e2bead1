import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runByKey, type KeyedSettlement } from '../../../libs/batch/run-by-key.js';

interface Item {
  readonly key: string | undefined;
}

const itemsArb = fc.array(
  fc.record({ key: fc.option(fc.constantFrom('a', 'b', 'c', 'd'), { nil: undefined }) }),
  { maxLength: 30 },
);

describe('runByKey', () => {
  it('keeps per-key input order, never overlaps a key, bounds concurrency and is work-conserving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), itemsArb, fc.integer({ min: 1, max: 5 }), async (s, items, max) => {
        const startedByKey = new Map<string, number[]>();
        const runningKeys = new Set<string>();
        let running = 0;
        let maxRunning = 0;
        let overlaps = 0;
        const settled: number[] = [];
        const run = async (item: Item, index: number): Promise<number> => {
          if (item.key !== undefined) {
            if (runningKeys.has(item.key)) overlaps += 1;
            runningKeys.add(item.key);
            startedByKey.set(item.key, [...(startedByKey.get(item.key) ?? []), index]);
          }
          running += 1;
          maxRunning = Math.max(maxRunning, running);
          await s.schedule(Promise.resolve(), `finish ${index}`);
          running -= 1;
          if (item.key !== undefined) runningKeys.delete(item.key);
          return index * 10;
        };
        const outcome = await s.waitFor(
          runByKey(items, run, {
            maxConcurrency: max,
            keyOf: (item) => item.key,
            onSettled: (index, settlement) => {
              expect(settlement).toEqual({ ok: true, value: index * 10 });
              settled.push(index);
            },
          }),
        );

        expect(overlaps).toBe(0);
        for (const [key, started] of startedByKey) {
          expect(started).toEqual(items.flatMap((item, i) => (item.key === key ? [i] : [])));
        }
        // As many as the bound allows start before anything finishes: one per key, one per keyless item.
        const independent = new Set(items.filter((i) => i.key !== undefined).map((i) => i.key)).size;
        const keyless = items.filter((i) => i.key === undefined).length;
        expect(maxRunning).toBe(Math.min(max, independent + keyless));
        expect([...settled].sort((x, y) => x - y)).toEqual(items.map((_, i) => i));
        expect(outcome).toEqual({ started: items.length, notStarted: 0 });
      }),
    );
  });

  it('gives a free slot to the oldest ready item', async () => {
    const order: number[] = [];
    await runByKey(
      ['a', 'a', 'b', 'c', 'a'],
      async (_key, index) => {
        order.push(index);
        await Promise.resolve();
      },
      { maxConcurrency: 1, keyOf: (key) => key },
    );
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('reports the next item of a key only after the previous one was reported', async () => {
    const events: string[] = [];
    await runByKey(
      [0, 1, 2],
      async (n) => {
        events.push(`run ${n}`);
        await Promise.resolve();
      },
      { maxConcurrency: 3, keyOf: () => 'same', onSettled: (index) => events.push(`settled ${index}`) },
    );
    expect(events).toEqual(['run 0', 'settled 0', 'run 1', 'settled 1', 'run 2', 'settled 2']);
  });

  it('reports a run that throws, synchronously or not, and keeps going; a throwing hook is swallowed', async () => {
    const settlements: Array<KeyedSettlement<string>> = [];
    const outcome = await runByKey(
      ['sync', 'async', 'fine'],
      (what) => {
        if (what === 'sync') throw new Error('sync boom');
        if (what === 'async') return Promise.reject(new Error('async boom'));
        return Promise.resolve(what);
      },
      {
        maxConcurrency: 1,
        keyOf: () => 'k',
        onSettled: (_index, settlement) => {
          settlements.push(settlement);
          throw new Error('a failing hook is swallowed');
        },
      },
    );
    expect(settlements.map((x) => (x.ok ? x.value : (x.error as Error).message))).toEqual([
      'sync boom',
      'async boom',
      'fine',
    ]);
    expect(outcome).toEqual({ started: 3, notStarted: 0 });
  });

  it('a key function that throws counts as no key', async () => {
    let running = 0;
    let maxRunning = 0;
    await runByKey(
      [1, 2, 3],
      async () => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((resolve) => setTimeout(resolve, 1));
        running -= 1;
      },
      {
        maxConcurrency: 3,
        keyOf: () => {
          throw new Error('no key');
        },
      },
    );
    expect(maxRunning).toBe(3);
  });

  it('starts nothing once stopped, lets running items finish, and counts the rest', async () => {
    let stop = false;
    const ran: number[] = [];
    const outcome = await runByKey(
      [0, 1, 2, 3, 4],
      async (n) => {
        ran.push(n);
        await Promise.resolve();
        if (n === 1) stop = true;
      },
      { maxConcurrency: 2, keyOf: () => undefined, stopped: () => stop },
    );
    expect(ran).toEqual([0, 1]);
    expect(outcome).toEqual({ started: 2, notStarted: 3 });
  });

  it('starts nothing when stopped from the start, resolves at once for no items, rejects a bad bound', async () => {
    let calls = 0;
    const run = (): Promise<void> => Promise.resolve(void (calls += 1));
    await expect(
      runByKey([1, 2], run, { maxConcurrency: 2, keyOf: () => undefined, stopped: () => true }),
    ).resolves.toEqual({ started: 0, notStarted: 2 });
    await expect(runByKey([], run, { maxConcurrency: 1, keyOf: () => undefined })).resolves.toEqual({
      started: 0,
      notStarted: 0,
    });
    expect(calls).toBe(0);
    for (const bad of [0, 1.5, Number.NaN]) {
      expect(() => runByKey([1], run, { maxConcurrency: bad, keyOf: () => undefined })).toThrow(RangeError);
    }
    expect(calls).toBe(0);
  });
});
