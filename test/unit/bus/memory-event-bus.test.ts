import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryEventBus } from '../../../libs/bus/memory/memory-event-bus.js';
import type { BatchControl, BatchHandler, BusMessage } from '../../../libs/ports/event-bus.js';

/** Behaviour only the memory bus has (crash simulation, inspection) or that is cheaper to probe here. */

const buses: MemoryEventBus[] = [];
function newBus(options: ConstructorParameters<typeof MemoryEventBus>[0] = {}): MemoryEventBus {
  const bus = new MemoryEventBus({ commitIntervalMs: 20, redeliveryDelayMs: 5, ...options });
  buses.push(bus);
  return bus;
}
afterEach(async () => {
  await Promise.all(buses.splice(0).map((b) => b.close()));
});

const msgs = (n: number, key = 'k') =>
  Array.from({ length: n }, (_, i) => ({ key, value: Buffer.from(String(i)) }));
const waitUntil = (check: () => void) => vi.waitFor(check, { timeout: 5_000, interval: 5 });

describe('MemoryEventBus', () => {
  it('crash(): reassigns at once, redelivers the unfinished message, refuses the zombie’s commits', async () => {
    const bus = newBus();
    await bus.ensureTopics([{ topic: 't', partitions: 1 }]);
    await bus.publish('t', msgs(3));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let zombieControl: BatchControl | undefined;
    const a = await bus.subscribe(
      { groupId: 'g', topics: ['t'], fromBeginning: true },
      async (batch, control) => {
        zombieControl = control;
        await held;
        for (const m of batch.messages) control.markDone(m.offset);
      },
    );
    await waitUntil(() => expect(zombieControl).toBeDefined());
    const seenByB: string[] = [];
    let joined = false;
    const joining = bus
      .subscribe({ groupId: 'g', topics: ['t'], fromBeginning: true }, (batch, control) => {
        for (const m of batch.messages) {
          seenByB.push(m.offset);
          if (m.offset === '0') control.markDone(m.offset);
        }
        return Promise.resolve();
      })
      .then((sub) => {
        joined = true;
        return sub;
      });
    // B's join waits for A to drain, and A is still inside its handler.
    await sleep(30);
    expect(joined).toBe(false);
    a.crash();
    const b = await joining;
    expect(b.assignment()).toEqual([{ topic: 't', partition: 0 }]);
    expect(a.assignment()).toEqual([]);
    expect(zombieControl!.isStale()).toBe(true);
    await waitUntil(() => expect(seenByB.slice(0, 3)).toEqual(['0', '1', '2']));
    await waitUntil(() => expect(bus.committedOffset('g', 't', 0)).toBe('1'));
    release(); // the zombie now marks all three done; its commit must be refused
    await sleep(60);
    expect(bus.committedOffset('g', 't', 0)).toBe('1');
  });

  it('commits the finished prefix within commitIntervalMs while the batch still runs', async () => {
    const bus = newBus({ commitIntervalMs: 10 });
    await bus.ensureTopics([{ topic: 't', partitions: 1 }]);
    await bus.publish('t', msgs(5));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await bus.subscribe({ groupId: 'g', topics: ['t'], fromBeginning: true }, async (batch, control) => {
      for (const m of batch.messages) {
        if (m.offset === '3') await held;
        control.markDone(m.offset);
      }
    });
    await waitUntil(() => expect(bus.committedOffset('g', 't', 0)).toBe('3'));
    release();
    await waitUntil(() => expect(bus.committedOffset('g', 't', 0)).toBe('5'));
  });

  it('never runs two batches of one partition, or more than partitionsConcurrently, at once across rebalances', async () => {
    const bus = newBus({ maxBatchSize: 3 });
    await bus.ensureTopics([{ topic: 't', partitions: 4 }]);
    const insidePartitions = new Map<number, number>();
    const insideByMember = new Map<string, number>();
    let violations = 0;
    const handled: number[] = [];
    const member =
      (name: string): BatchHandler =>
      async (batch, control) => {
        const p = (insidePartitions.get(batch.partition) ?? 0) + 1;
        const mine = (insideByMember.get(name) ?? 0) + 1;
        insidePartitions.set(batch.partition, p);
        insideByMember.set(name, mine);
        if (p > 1 || mine > 2 || batch.messages.length > 3) violations += 1;
        for (const m of batch.messages) {
          if (control.isStale()) break;
          await sleep(1);
          handled.push(Number(m.value.toString()));
          control.markDone(m.offset);
        }
        insidePartitions.set(batch.partition, insidePartitions.get(batch.partition)! - 1);
        insideByMember.set(name, insideByMember.get(name)! - 1);
      };
    const opts = { groupId: 'g', topics: ['t'], fromBeginning: true, partitionsConcurrently: 2 } as const;
    const a = await bus.subscribe(opts, member('a'));
    const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
    await bus.publish(
      't',
      Array.from({ length: 200 }, (_, i) => ({ key: keys[i % 20]!, value: Buffer.from(String(i)) })),
    );
    const b = await bus.subscribe(opts, member('b'));
    const c = await bus.subscribe(opts, member('c'));
    await b.stop();
    await waitUntil(() => expect(new Set(handled).size).toBe(200));
    await a.stop();
    await c.stop();
    expect(violations).toBe(0);
  });

  it('copies values on publish and on delivery', async () => {
    const bus = newBus();
    await bus.ensureTopics([{ topic: 't', partitions: 1 }]);
    const value = Buffer.from('abc');
    await bus.publish('t', [{ key: 'k', value }]);
    value.write('zzz');
    const seen: string[] = [];
    const mutate: BatchHandler = (batch, control) => {
      for (const m of batch.messages) {
        seen.push(m.value.toString());
        m.value.write('XX');
        control.markDone(m.offset);
      }
      return Promise.resolve();
    };
    await bus.subscribe({ groupId: 'g1', topics: ['t'], fromBeginning: true }, mutate);
    await bus.subscribe({ groupId: 'g2', topics: ['t'], fromBeginning: true }, mutate);
    await waitUntil(() => expect(seen).toEqual(['abc', 'abc']));
  });

  it('stamps messages with the injected clock and honours maxBatchSize', async () => {
    const bus = newBus({ clock: { now: () => 1_234 }, maxBatchSize: 2 });
    await bus.ensureTopics([{ topic: 't', partitions: 1 }]);
    await bus.publish('t', msgs(5));
    const sizes: number[] = [];
    const all: BusMessage[] = [];
    await bus.subscribe({ groupId: 'g', topics: ['t'], fromBeginning: true }, (batch, control) => {
      sizes.push(batch.messages.length);
      for (const m of batch.messages) {
        all.push(m);
        control.markDone(m.offset);
      }
      return Promise.resolve();
    });
    await waitUntil(() => expect(all.length).toBe(5));
    expect(sizes).toEqual([2, 2, 1]);
    expect(all.every((m) => m.timestampMs === 1_234)).toBe(true);
  });

  it('throws for a foreign offset and ignores marks after the handler returned', async () => {
    const bus = newBus();
    await bus.ensureTopics([{ topic: 't', partitions: 1 }]);
    await bus.publish('t', msgs(2));
    let late: BatchControl | undefined;
    const thrown: unknown[] = [];
    await bus.subscribe({ groupId: 'g', topics: ['t'], fromBeginning: true }, (batch, control) => {
      try {
        control.markDone('999');
      } catch (error) {
        thrown.push(error);
      }
      for (const m of batch.messages) control.markDone(m.offset);
      late = control;
      return Promise.resolve();
    });
    await waitUntil(() => expect(bus.committedOffset('g', 't', 0)).toBe('2'));
    expect(thrown[0]).toBeInstanceOf(RangeError);
    expect(() => late!.markDone('0')).not.toThrow();
    await expect(late!.heartbeat()).resolves.toBeUndefined();
  });

  it('validates arguments and refuses use after close', async () => {
    const bus = newBus();
    await expect(bus.ensureTopics([{ topic: 'bad topic', partitions: 1 }])).rejects.toThrow(TypeError);
    await expect(bus.ensureTopics([{ topic: 't', partitions: 0 }])).rejects.toThrow(RangeError);
    await expect(
      bus.ensureTopics([
        { topic: 't', partitions: 1 },
        { topic: 't', partitions: 2 },
      ]),
    ).rejects.toThrow(RangeError);
    await bus.ensureTopics([{ topic: 't', partitions: 1 }]);
    await expect(
      bus.publish('t', [{ key: 'k', value: Buffer.from('x'), headers: { n: 1 as unknown as string } }]),
    ).rejects.toThrow(TypeError);
    await expect(
      bus.publish('t', [{ key: 7 as unknown as string, value: Buffer.from('x') }]),
    ).rejects.toThrow(TypeError);
    await expect(
      bus.subscribe({ groupId: '', topics: ['t'], fromBeginning: true }, () => Promise.resolve()),
    ).rejects.toThrow(TypeError);
    await expect(
      bus.subscribe({ groupId: 'g', topics: ['t'], fromBeginning: true, partitionsConcurrently: 0 }, () =>
        Promise.resolve(),
      ),
    ).rejects.toThrow(RangeError);
    const sub = await bus.subscribe({ groupId: 'g', topics: ['t'], fromBeginning: true }, () =>
      Promise.resolve(),
    );
    await bus.close();
    expect(sub.assignment()).toEqual([]);
    await expect(bus.publish('t', msgs(1))).rejects.toThrow(/closed/);
    await expect(sub.stop()).resolves.toBeUndefined();
  });
});
