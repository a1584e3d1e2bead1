import { describe, expect, it } from 'vitest';
import type { TestKafka } from '../../helpers/kafka.js';
import { consumeMessages, createTestKafka } from '../../helpers/kafka.js';
import { openForSuite } from '../../helpers/stack-lifecycle.js';

const KEYS = ['customer-a', 'customer-b', 'customer-c', 'customer-d', 'customer-e'];
const TOTAL = 200;

describe('kafka: keyed produce and consume', () => {
  let tk: TestKafka;
  openForSuite(() => (tk = createTestKafka('smoke-keyed')));

  it('sends every message of a key to one partition and keeps their order', async () => {
    const topic = await tk.uniqueTopic('smoke_keyed', 6);
    const producer = tk.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();

    const next = new Map<string, number>();
    const partitionsOf = new Map<string, Set<number>>();
    // Ten sends of twenty, each awaited: order per key must survive batch boundaries too.
    for (let batch = 0; batch < TOTAL / 20; batch++) {
      const messages = Array.from({ length: 20 }, (_, i) => {
        const key = KEYS[(batch * 20 + i) % KEYS.length]!;
        const seq = next.get(key) ?? 0;
        next.set(key, seq + 1);
        return { key, value: JSON.stringify({ key, seq }) };
      });
      const meta = await producer.send({ topic, acks: -1, messages });
      for (const m of meta) expect(m.errorCode).toBe(0);
    }

    const consumer = tk.consumer({ groupId: tk.uniqueGroupId('smoke_keyed') });
    const received = await consumeMessages(consumer, topic, TOTAL);

    expect(received).toHaveLength(TOTAL);
    const byKey = new Map<string, { partition: number; seq: number; offset: bigint }[]>();
    for (const r of received) {
      const body = JSON.parse(r.value!.toString()) as { key: string; seq: number };
      expect(r.key!.toString()).toBe(body.key);
      const list = byKey.get(body.key) ?? [];
      list.push({ partition: r.partition, seq: body.seq, offset: BigInt(r.offset) });
      byKey.set(body.key, list);
      const parts = partitionsOf.get(body.key) ?? new Set<number>();
      parts.add(r.partition);
      partitionsOf.set(body.key, parts);
    }
    expect([...byKey.keys()].sort()).toEqual([...KEYS].sort());
    for (const key of KEYS) {
      const list = byKey.get(key)!;
      expect(partitionsOf.get(key)!.size, `${key} spread over partitions`).toBe(1);
      expect(list.map((m) => m.seq)).toEqual(Array.from({ length: TOTAL / KEYS.length }, (_, i) => i));
      for (let i = 1; i < list.length; i++) expect(list[i]!.offset > list[i - 1]!.offset).toBe(true);
    }
    // The five keys hash to several of the six partitions, so the per-key order above is not the
    // trivial order of a single partition.
    const used = new Set([...partitionsOf.values()].map((s) => [...s][0]));
    expect(used.size).toBeGreaterThan(1);
  });
});
