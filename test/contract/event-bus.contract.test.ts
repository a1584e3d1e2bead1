import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processBatchByKey } from '../../libs/bus/keyed-processor.js';
import { partitionForKey } from '../../libs/bus/partitioner.js';
import type { BatchHandler, BusMessage, EventBus, Subscription } from '../../libs/ports/event-bus.js';
import {
  eventually,
  gate,
  kafkaClusterFixture,
  kafkaFixture,
  memoryFixture,
  numbered,
  Received,
  seqOf,
  type BusFixture,
  type BusFixtureFactory,
} from '../integration/bus/bus-fixtures.js';

/** A key, made from `prefix`, that the murmur2 partitioner puts on `partition` of `count`. */
function keyOn(partition: number, count: number, prefix: string): string {
  for (let i = 0; ; i += 1)
    if (partitionForKey(`${prefix}-${i}`, count) === partition) return `${prefix}-${i}`;
}

/**
 * One suite, run against every EventBus adapter: the memory bus must behave like Kafka wherever
 * the product relies on it (per-key order, one bad message never stalling a partition,
 * at-least-once with committed prefixes).
 */
function eventBusContract(name: string, makeFixture: BusFixtureFactory): void {
  describe(name, () => {
    let fx: BusFixture;
    let bus: EventBus;
    const subscriptions: Subscription[] = [];
    const subscribe = async (...args: Parameters<EventBus['subscribe']>): Promise<Subscription> => {
      const s = await bus.subscribe(...args);
      subscriptions.push(s);
      return s;
    };

    /** A fresh one-partition topic `name` holding `count` numbered messages over `keys`, and a fresh group. */
    const published = async (name: string, count: number, keys: string[]) => {
      const topic = await fx.topic(name, 1);
      await bus.publish(topic, numbered(count, keys));
      return { topic, group: fx.group(name) };
    };
    /** Subscribes a new member of `group` to `topic` from the beginning; the first `n` offsets it gets. */
    const nextMemberReads = async (group: string, topic: string, n: number): Promise<string[]> => {
      const next = new Received();
      await subscribe({ groupId: group, topics: [topic], fromBeginning: true }, next.handler());
      await next.waitForDistinct(n);
      return next
        .distinct()
        .map((m) => m.offset)
        .slice(0, n);
    };

    beforeAll(async () => {
      fx = await makeFixture();
      bus = fx.bus;
    });
    afterAll(async () => {
      await Promise.all(subscriptions.map((s) => s.stop()));
      await fx.close();
    });

    it('puts a key on one partition (murmur2, as partitionForKey) and keeps publish order per key', async () => {
      const topic = await fx.topic('order', 4);
      const keys = Array.from({ length: 20 }, (_, i) => `tenant-1:sku-${i}`);
      const messages = numbered(300, keys);
      // Three calls, each awaited: order per key holds across calls made one after another.
      for (let i = 0; i < 300; i += 100) await bus.publish(topic, messages.slice(i, i + 100));
      const got = new Received();
      await subscribe({ groupId: fx.group('order'), topics: [topic], fromBeginning: true }, got.handler());
      // Placement and order are under test, not exactly-once delivery: a group's first rebalance may
      // deliver a message again, so each message is judged once, at its first delivery.
      await got.waitForDistinct(300);
      const delivered = got.distinct();

      expect(delivered.map(seqOf).sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => i));
      for (const key of keys) {
        const mine = delivered.filter((m) => m.key === key);
        expect(new Set(mine.map((m) => m.partition))).toEqual(new Set([partitionForKey(key, 4)]));
        const seqs = mine.map(seqOf);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      }
      for (let p = 0; p < 4; p += 1) {
        const offsets = delivered.filter((m) => m.partition === p).map((m) => BigInt(m.offset));
        expect(offsets).toEqual([...offsets].sort((a, b) => (a < b ? -1 : 1)));
      }
    });

    it('gives every group every message', async () => {
      const topic = await fx.topic('groups', 3);
      const first = new Received();
      const second = new Received();
      await subscribe({ groupId: fx.group('g1'), topics: [topic], fromBeginning: true }, first.handler());
      await subscribe({ groupId: fx.group('g2'), topics: [topic], fromBeginning: true }, second.handler());
      await bus.publish(topic, numbered(60, ['a', 'b', 'c', 'd']));
      await first.waitForDistinct(60);
      await second.waitForDistinct(60);
      const all = Array.from({ length: 60 }, (_, i) => i);
      expect(
        first
          .distinct()
          .map(seqOf)
          .sort((a, b) => a - b),
      ).toEqual(all);
      expect(
        second
          .distinct()
          .map(seqOf)
          .sort((a, b) => a - b),
      ).toEqual(all);
    });

    it('splits a group’s partitions between its members, who together receive each message once', async () => {
      const topic = await fx.topic('split', 4);
      const group = fx.group('split');
      const a = new Received();
      const b = new Received();
      const subA = await subscribe({ groupId: group, topics: [topic], fromBeginning: true }, a.handler());
      const subB = await subscribe({ groupId: group, topics: [topic], fromBeginning: true }, b.handler());
      await eventually(() => {
        const pa = subA.assignment().map((tp) => tp.partition);
        const pb = subB.assignment().map((tp) => tp.partition);
        expect(pa.length).toBeGreaterThan(0);
        expect(pb.length).toBeGreaterThan(0);
        expect([...pa, ...pb].sort()).toEqual([0, 1, 2, 3]);
      });
      const keys = Array.from({ length: 16 }, (_, i) => `k${i}`);
      await bus.publish(topic, numbered(200, keys));
      await eventually(() => expect(a.messages.length + b.messages.length).toBeGreaterThanOrEqual(200));

      expect([...a.seqs(), ...b.seqs()].sort((x, y) => x - y)).toEqual(
        Array.from({ length: 200 }, (_, i) => i),
      );
      const ownedByA = new Set(subA.assignment().map((tp) => tp.partition));
      expect(a.messages.every((m) => ownedByA.has(m.partition))).toBe(true);
      expect(b.messages.every((m) => !ownedByA.has(m.partition))).toBe(true);
    });

    it('redelivers what a stopped member left unfinished to the next member, and nothing it finished', async () => {
      const { topic, group } = await published('redeliver', 10, ['k']);
      const first = new Received();
      const sub = await subscribe(
        { groupId: group, topics: [topic], fromBeginning: true },
        first.handler((m) => Number(m.offset) < 5),
      );
      // Unfinished messages come back to the same member until it stops; wait until all were seen.
      await eventually(() => expect(new Set(first.offsets()).size).toBe(10));
      await sub.stop();

      expect(await nextMemberReads(group, topic, 5)).toEqual(['5', '6', '7', '8', '9']);
    });

    it('commits only the contiguous finished prefix when messages finish out of order', async () => {
      const { topic, group } = await published('prefix', 6, ['x', 'y', 'z']);
      const seen = new Set<string>();
      const handler: BatchHandler = (batch, control) => {
        for (const m of batch.messages) seen.add(m.offset);
        // Finish in reverse, leaving offset 2 unfinished.
        for (const m of [...batch.messages].reverse()) if (m.offset !== '2') control.markDone(m.offset);
        return Promise.resolve();
      };
      const sub = await subscribe({ groupId: group, topics: [topic], fromBeginning: true }, handler);
      await eventually(() => expect(seen.size).toBe(6));
      await sub.stop();

      expect(await nextMemberReads(group, topic, 4)).toEqual(['2', '3', '4', '5']);
    });

    it('round-trips keys, values and headers', async () => {
      const topic = await fx.topic('headers', 2);
      const binary = Buffer.from([0, 255, 1, 254, 10, 13]);
      await bus.publish(topic, [
        {
          key: 'tenant:ключ:🔑',
          value: binary,
          headers: { 'content-type': 'application/avro', trace: 'ü-1', empty: '' },
        },
        { key: '', value: Buffer.alloc(0) },
      ]);
      const got = new Received();
      await subscribe({ groupId: fx.group('headers'), topics: [topic], fromBeginning: true }, got.handler());
      await got.waitFor(2);
      const withHeaders = got.messages.find((m) => m.key === 'tenant:ключ:🔑')!;
      expect(withHeaders.value.equals(binary)).toBe(true);
      expect(withHeaders.headers).toEqual({ 'content-type': 'application/avro', trace: 'ü-1', empty: '' });
      expect(withHeaders.topic).toBe(topic);
      expect(withHeaders.partition).toBe(partitionForKey('tenant:ключ:🔑', 2));
      expect(Number.isFinite(withHeaders.timestampMs) && withHeaders.timestampMs > 0).toBe(true);
      const bare = got.messages.find((m) => m.key === '')!;
      expect(bare.value.length).toBe(0);
      expect(bare.headers).toEqual({});
    });

    it('starts a new group at the earliest message or at the end, and commits that start at once', async () => {
      const topic = await fx.topic('start', 1);
      await bus.publish(topic, numbered(3, ['k']));
      const latestGroup = fx.group('latest');
      const early = new Received();
      const idle = await subscribe(
        { groupId: latestGroup, topics: [topic], fromBeginning: false },
        early.handler(),
      );
      await idle.stop();
      // Published while the latest-group has no member: its pinned start (3) must keep them.
      await bus.publish(topic, [
        { key: 'k', value: Buffer.from('3') },
        { key: 'k', value: Buffer.from('4') },
      ]);
      const latest = new Received();
      await subscribe({ groupId: latestGroup, topics: [topic], fromBeginning: false }, latest.handler());
      const earliest = new Received();
      await subscribe(
        { groupId: fx.group('earliest'), topics: [topic], fromBeginning: true },
        earliest.handler(),
      );
      const fresh = new Received();
      await subscribe({ groupId: fx.group('fresh'), topics: [topic], fromBeginning: false }, fresh.handler());
      await bus.publish(topic, [{ key: 'k', value: Buffer.from('5') }]);

      await latest.waitForDistinct(3);
      await earliest.waitForDistinct(6);
      await fresh.waitForDistinct(1);
      const offsets = (r: Received) => r.distinct().map((m) => m.offset);
      expect(early.messages).toEqual([]);
      expect(offsets(latest)).toEqual(['3', '4', '5']);
      expect(offsets(earliest)).toEqual(['0', '1', '2', '3', '4', '5']);
      expect(offsets(fresh)).toEqual(['5']);
    });

    it('processBatchByKey: per key in publish order, one at a time, while other keys overlap', async () => {
      const topic = await fx.topic('keyed', 2);
      const keys = Array.from({ length: 8 }, (_, i) => `resource-${i}`);
      // Published before subscribing, so whole runs of several keys arrive in one batch.
      await bus.publish(topic, numbered(160, keys));
      const startedSeqs = new Map<string, number[]>();
      const runningKeys = new Set<string>();
      let running = 0;
      let maxRunning = 0;
      let sameKeyOverlap = 0;
      let done = 0;
      const handle = async (m: BusMessage): Promise<void> => {
        if (runningKeys.has(m.key)) sameKeyOverlap += 1;
        runningKeys.add(m.key);
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        startedSeqs.set(m.key, [...(startedSeqs.get(m.key) ?? []), seqOf(m)]);
        await sleep(2);
        running -= 1;
        runningKeys.delete(m.key);
        done += 1;
      };
      await subscribe(
        { groupId: fx.group('keyed'), topics: [topic], fromBeginning: true },
        async (batch, control) => {
          await processBatchByKey(batch, control, handle, { maxConcurrency: 4 });
        },
      );
      await eventually(() => expect(done).toBe(160));

      expect(sameKeyOverlap).toBe(0);
      expect(maxRunning).toBeGreaterThan(1);
      expect(maxRunning).toBeLessThanOrEqual(4);
      for (const key of keys) {
        const expected = numbered(160, keys)
          .map((m, seq) => ({ key: m.key, seq }))
          .filter((m) => m.key === key)
          .map((m) => m.seq);
        expect(startedSeqs.get(key)).toEqual(expected);
      }
    });

    it('subscribeKeyed: a slow message holds only its own key, on its partition and every other', async () => {
      const topic = await fx.topic('keyed-slow', 3);
      const slow = 'slow-key';
      const p = partitionForKey(slow, 3);
      const sameP = keyOn(p, 3, 'same');
      const otherP = keyOn((p + 1) % 3, 3, 'other');
      const hold = gate();
      const events: string[] = [];
      const sub = await bus.subscribeKeyed(
        { groupId: fx.group('keyed-slow'), topics: [topic], fromBeginning: true, maxConcurrency: 4 },
        async (m) => {
          events.push(`start:${m.key}:${m.value.toString()}`);
          if (m.value.toString() === 'first') await hold.wait;
          events.push(`end:${m.key}:${m.value.toString()}`);
          return true;
        },
      );
      subscriptions.push(sub);
      await bus.publish(topic, [{ key: slow, value: Buffer.from('first') }]);
      await eventually(() => expect(events).toContain(`start:${slow}:first`));
      // Published after the slow message started: another fetch, on Kafka as on the memory bus.
      await bus.publish(topic, [
        { key: slow, value: Buffer.from('second') },
        { key: sameP, value: Buffer.from('x') },
        { key: otherP, value: Buffer.from('y') },
      ]);
      await eventually(() => {
        expect(events).toContain(`end:${sameP}:x`);
        expect(events).toContain(`end:${otherP}:y`);
      });
      expect(events).not.toContain(`start:${slow}:second`);
      hold.open();
      await eventually(() => expect(events).toContain(`end:${slow}:second`));
      expect(events.indexOf(`end:${slow}:first`)).toBeLessThan(events.indexOf(`start:${slow}:second`));
    });

    it('subscribeKeyed: per key in publish order, one at a time, across fetches and partitions', async () => {
      const topic = await fx.topic('keyed-order', 2);
      const keys = Array.from({ length: 8 }, (_, i) => `k${i}`);
      const running = new Set<string>();
      const overlaps: string[] = [];
      const got = new Map<string, number[]>();
      let count = 0;
      const sub = await bus.subscribeKeyed(
        { groupId: fx.group('keyed-order'), topics: [topic], fromBeginning: true, maxConcurrency: 6 },
        async (m) => {
          if (running.has(m.key)) overlaps.push(m.key);
          running.add(m.key);
          await sleep(seqOf(m) % 3);
          running.delete(m.key);
          got.set(m.key, [...(got.get(m.key) ?? []), seqOf(m)]);
          count += 1;
          return true;
        },
      );
      subscriptions.push(sub);
      const messages = numbered(160, keys);
      for (let i = 0; i < 160; i += 40) await bus.publish(topic, messages.slice(i, i + 40));
      await eventually(() => expect(count).toBe(160));
      expect(overlaps).toEqual([]);
      for (const key of keys) {
        const seqs = got.get(key)!;
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      }
    });

    it('subscribeKeyed: commits never pass an unfinished message; the next member starts at it', async () => {
      const { topic, group } = await published('keyed-commit', 5, ['a', 'b', 'c', 'd', 'e']);
      const finished = new Set<string>();
      const first = await bus.subscribeKeyed(
        { groupId: group, topics: [topic], fromBeginning: true, maxConcurrency: 5 },
        async (m, context) => {
          if (m.offset !== '0') {
            finished.add(m.offset);
            return true;
          }
          // Offset 0 never finishes: it gives up when the member stops.
          await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
          return false;
        },
      );
      await eventually(() => expect(finished.size).toBe(4));
      await first.stop();
      expect(await nextMemberReads(group, topic, 5)).toEqual(['0', '1', '2', '3', '4']);
    });

    it('hands a revoked partition to a new member only after the running message finished', async () => {
      const { topic, group } = await published('rebalance', 5, ['k']);
      const events: string[] = [];
      const hold = gate();
      const member =
        (name: string): BatchHandler =>
        async (batch, control) => {
          for (const m of batch.messages) {
            if (control.isStale()) return;
            events.push(`${name}:start:${m.offset}`);
            if (name === 'A' && m.offset === '0') {
              control.signal.addEventListener('abort', () => events.push('A:revoked'), { once: true });
              await hold.wait;
            }
            events.push(`${name}:end:${m.offset}`);
            control.markDone(m.offset);
          }
        };
      await subscribe({ groupId: group, topics: [topic], fromBeginning: true }, member('A'));
      await eventually(() => expect(events).toContain('A:start:0'));
      const joining = subscribe({ groupId: group, topics: [topic], fromBeginning: true }, member('B'));
      await eventually(() => expect(events).toContain('A:revoked'));
      expect(events.filter((e) => e.startsWith('B:'))).toEqual([]);
      hold.open();
      await joining;
      await eventually(() => {
        for (const offset of ['0', '1', '2', '3', '4'])
          expect(events.some((e) => e.endsWith(`:end:${offset}`))).toBe(true);
      });

      const starts = events.filter((e) => e.includes(':start:'));
      expect(starts.map((e) => e.split(':')[2]).sort()).toEqual(['0', '1', '2', '3', '4']);
      const firstB = events.findIndex((e) => e.startsWith('B:'));
      if (firstB >= 0) expect(events.indexOf('A:end:0')).toBeLessThan(firstB);
      // Once revoked, nothing started until A's running message had finished.
      const revokedAt = events.indexOf('A:revoked');
      const finishedAt = events.indexOf('A:end:0');
      expect(revokedAt).toBeGreaterThan(-1);
      expect(events.slice(revokedAt, finishedAt).filter((e) => e.includes(':start:'))).toEqual([]);
    });

    it('stop lets the running message finish and commits it; nothing new starts', async () => {
      const { topic, group } = await published('drain', 3, ['k']);
      const started: string[] = [];
      const hold = gate();
      let stale = false;
      const sub = await subscribe(
        { groupId: group, topics: [topic], fromBeginning: true },
        async (batch, control) => {
          for (const m of batch.messages) {
            if (control.isStale()) return;
            started.push(m.offset);
            control.signal.addEventListener('abort', () => (stale = true), { once: true });
            await hold.wait;
            control.markDone(m.offset);
          }
        },
      );
      await eventually(() => expect(started).toEqual(['0']));
      const stopping = sub.stop();
      await eventually(() => expect(stale).toBe(true));
      hold.open();
      await stopping;
      expect(started).toEqual(['0']);
      expect(sub.assignment()).toEqual([]);

      expect(await nextMemberReads(group, topic, 2)).toEqual(['1', '2']);
    });

    it('delivers the unfinished rest of a batch again after its handler rejected', async () => {
      const topic = await fx.topic('reject', 1);
      await bus.publish(topic, numbered(4, ['k']));
      const got = new Received();
      let rejected = false;
      await subscribe(
        { groupId: fx.group('reject'), topics: [topic], fromBeginning: true },
        (batch, control) => {
          for (const m of batch.messages) {
            got.messages.push(m);
            if (m.offset === '2' && !rejected) {
              rejected = true;
              return Promise.reject(new Error('handler bug'));
            }
            control.markDone(m.offset);
          }
          return Promise.resolve();
        },
      );
      await eventually(() => expect(got.offsets().filter((o) => o === '3').length).toBe(1));
      // 0 and 1 were finished before the failure and are not delivered again; 2 is, then 3.
      expect(got.offsets()).toEqual(['0', '1', '2', '2', '3']);
      expect(fx.errors.some((e) => e.msg?.includes('batch handler rejected'))).toBe(true);
    });

    it('handles up to partitionsConcurrently partitions of one member at the same time', async () => {
      const topic = await fx.topic('parallel', 2);
      // One key per partition, published before subscribing so both partitions have work at once.
      const keys = ['p0', 'p1', 'x0', 'x1', 'y0', 'y1'];
      const byPartition = [0, 1].map((p) => keys.find((k) => partitionForKey(k, 2) === p)!);
      await bus.publish(topic, numbered(10, byPartition));
      const inside = new Set<number>();
      let overlapped = false;
      const bothInside = gate();
      await subscribe(
        { groupId: fx.group('parallel'), topics: [topic], fromBeginning: true, partitionsConcurrently: 2 },
        async (batch, control) => {
          inside.add(batch.partition);
          if (inside.size === 2) {
            overlapped = true;
            bothInside.open();
          }
          // Wait (bounded) for the other partition's handler to be inside too.
          await Promise.race([bothInside.wait, sleep(5_000)]);
          for (const m of batch.messages) control.markDone(m.offset);
          inside.delete(batch.partition);
        },
      );
      await eventually(() => expect(overlapped).toBe(true));
    });

    it('refuses unknown topics and a partition-count change; ensureTopics is idempotent', async () => {
      const missing = `${fx.group('missing')}_topic`;
      await expect(bus.publish(missing, numbered(1, ['k']))).rejects.toThrow(/unknown topic/);
      await expect(
        bus.subscribe({ groupId: fx.group('missing'), topics: [missing], fromBeginning: true }, () =>
          Promise.resolve(),
        ),
      ).rejects.toThrow(/unknown topic/);
      const topic = await fx.topic('ensure', 2);
      await bus.ensureTopics([{ topic, partitions: 2, replicationFactor: 1 }]);
      await expect(bus.ensureTopics([{ topic, partitions: 3, replicationFactor: 1 }])).rejects.toThrow(
        /2 partitions/,
      );
      await expect(bus.publish(topic, [{ key: 'k', value: 'text' as unknown as Buffer }])).rejects.toThrow(
        TypeError,
      );
    });

    it('puts a message with an explicit partition on that partition, whatever its key', async () => {
      const topic = await fx.topic('explicit', 4);
      const key = 'tenant-1:sku-7';
      const natural = partitionForKey(key, 4);
      const chosen = (natural + 1) % 4;
      await bus.publish(topic, [
        { key, value: Buffer.from('0'), partition: chosen },
        { key, value: Buffer.from('1') },
        { key, value: Buffer.from('2'), partition: chosen },
      ]);
      const got = new Received();
      await subscribe({ groupId: fx.group('explicit'), topics: [topic], fromBeginning: true }, got.handler());
      // Where each message lands is under test, not exactly-once delivery: count each message once.
      await got.waitForDistinct(3);
      const delivered = got.distinct();
      const partitionOf = (seq: number): number | undefined =>
        delivered.find((m) => m.value.toString() === String(seq))?.partition;
      expect([partitionOf(0), partitionOf(1), partitionOf(2)]).toEqual([chosen, natural, chosen]);
      expect(delivered.filter((m) => m.partition === chosen).map((m) => m.value.toString())).toEqual([
        '0',
        '2',
      ]);
    });

    it('refuses an explicit partition the topic does not have, publishing nothing of that call', async () => {
      const topic = await fx.topic('outside', 2);
      await expect(
        bus.publish(topic, [
          { key: 'a', value: Buffer.from('0') },
          { key: 'b', value: Buffer.from('1'), partition: 2 },
        ]),
      ).rejects.toThrow(RangeError);
      await expect(
        bus.publish(topic, [{ key: 'a', value: Buffer.from('x'), partition: -1 }]),
      ).rejects.toThrow(RangeError);
      await bus.publish(topic, [{ key: 'a', value: Buffer.from('after') }]);
      const got = new Received();
      await subscribe({ groupId: fx.group('outside'), topics: [topic], fromBeginning: true }, got.handler());
      await got.waitForDistinct(1);
      expect(got.distinct().map((m) => m.value.toString())).toEqual(['after']);
    });

    it('a member with partitions [2] is assigned partition 2 only and receives only its messages', async () => {
      const topic = await fx.topic('static', 4);
      const keys = Array.from({ length: 24 }, (_, i) => `k${i}`);
      const messages = numbered(96, keys);
      await bus.publish(topic, messages);
      const expected = messages.filter((m) => partitionForKey(m.key, 4) === 2).map((m) => m.value.toString());
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(96);

      const got = new Received();
      const sub = await subscribe(
        { groupId: fx.group('static'), topics: [topic], fromBeginning: true, partitions: [2] },
        got.handler(),
      );
      expect(sub.assignment()).toEqual([{ topic, partition: 2 }]);
      // A later message on every partition; the one on partition 2 is the last this member gets.
      await bus.publish(
        topic,
        [0, 1, 3, 2].map((p) => ({ key: 'late', value: Buffer.from(`late-${p}`), partition: p })),
      );
      await got.waitForDistinct(expected.length + 1);

      expect(got.messages.every((m) => m.partition === 2)).toBe(true);
      expect(got.distinct().map((m) => m.value.toString())).toEqual([...expected, 'late-2']);
    });

    it('static members of separate groups on separate partitions share nothing', async () => {
      const topic = await fx.topic('slots', 3);
      const a = new Received();
      const b = new Received();
      await subscribe(
        { groupId: fx.group('slot0'), topics: [topic], fromBeginning: false, partitions: [0] },
        a.handler(),
      );
      await subscribe(
        { groupId: fx.group('slot1'), topics: [topic], fromBeginning: false, partitions: [1] },
        b.handler(),
      );
      await bus.publish(
        topic,
        [0, 1, 2, 0, 1, 2].map((p, i) => ({ key: `r${i}`, value: Buffer.from(`${p}:${i}`), partition: p })),
      );
      // A last message per slot after everything else, so each member has seen all it ever will.
      await bus.publish(topic, [
        { key: 'end', value: Buffer.from('0:end'), partition: 0 },
        { key: 'end', value: Buffer.from('1:end'), partition: 1 },
      ]);
      await a.waitForDistinct(3);
      await b.waitForDistinct(3);
      expect(a.distinct().map((m) => m.value.toString())).toEqual(['0:0', '0:3', '0:end']);
      expect(b.distinct().map((m) => m.value.toString())).toEqual(['1:1', '1:4', '1:end']);
    });

    it('refuses static partitions the topic lacks, and malformed ones', async () => {
      const topic = await fx.topic('static_bad', 2);
      const handler = new Received().handler();
      const options = { groupId: fx.group('bad'), topics: [topic], fromBeginning: true };
      await expect(bus.subscribe({ ...options, partitions: [2] }, handler)).rejects.toThrow(RangeError);
      await expect(bus.subscribe({ ...options, partitions: [] }, handler)).rejects.toThrow(TypeError);
      await expect(bus.subscribe({ ...options, partitions: [1, 1] }, handler)).rejects.toThrow(RangeError);
    });
  });
}

eventBusContract('memory event bus', memoryFixture);
eventBusContract('kafka event bus', kafkaFixture);
eventBusContract(
  'kafka event bus on a 3-broker cluster (replication 3, min.insync.replicas 2)',
  kafkaClusterFixture,
);
