import type { Message, Producer, ProducerRecord } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { KafkaPublisher } from '../../../libs/bus/kafka/kafka-publisher.js';
import { partitionForKey } from '../../../libs/bus/partitioner.js';
import type { OutgoingMessage } from '../../../libs/ports/event-bus.js';

/**
 * The publisher's promise to the idempotent producer: each send carries one partition's records
 * (a kafkajs retry skips a partition whose leadership moved to a broker that already answered the
 * send), and never two sends to one partition at once (a second send could take a sequence number
 * kafkajs rolled back after a failed request, and be answered "duplicate" without being written).
 * These tests drive a stand-in producer whose sends finish when the test says, and record what was
 * in flight; the leader failover itself is in the chaos suite (kafka-failover).
 */
class StandInProducer {
  readonly sends: Array<{ topic: string; values: string[] }> = [];
  inFlight = new Map<string, number>();
  maxInFlight = new Map<string, number>();
  private readonly finishers: Array<(error?: Error) => void> = [];

  /** Sends by topic and partition; a send with records of several partitions is a defect. */
  send(record: ProducerRecord): Promise<void> {
    const values = record.messages.map((m: Message) => String(m.value));
    const partitions = new Set(record.messages.map((m: Message) => m.partition));
    if (partitions.size !== 1 || partitions.has(undefined)) {
      return Promise.reject(new Error(`a send must name one partition, got ${[...partitions].join(',')}`));
    }
    this.sends.push({ topic: record.topic, values });
    const lane = `${record.topic}/${[...partitions][0]}`;
    const now = (this.inFlight.get(lane) ?? 0) + 1;
    this.inFlight.set(lane, now);
    this.maxInFlight.set(lane, Math.max(now, this.maxInFlight.get(lane) ?? 0));
    return new Promise<void>((resolve, reject) => {
      this.finishers.push((error) => {
        this.inFlight.set(lane, this.inFlight.get(lane)! - 1);
        if (error === undefined) resolve();
        else reject(error);
      });
    });
  }

  /** Finishes the oldest unfinished send, with `error` when given. */
  finishNext(error?: Error): void {
    const finish = this.finishers.shift();
    if (finish === undefined) throw new Error('no send in flight');
    finish(error);
  }

  get unfinished(): number {
    return this.finishers.length;
  }
}

function setup(): { producer: StandInProducer; publisher: KafkaPublisher } {
  const producer = new StandInProducer();
  const publisher = new KafkaPublisher(
    producer as unknown as Producer,
    () => Promise.resolve(),
    () => Promise.resolve(4),
  );
  return { producer, publisher };
}

const msg = (value: string, key = 'k'): OutgoingMessage => ({ key, value: Buffer.from(value) });

/** Lets the publisher's awaits (readiness, partition count) and its one-turn gathering run. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
};

/** Tracks a promise's state without awaiting it. */
function watch(p: Promise<void>): { state: () => 'pending' | 'resolved' | 'rejected'; error: () => unknown } {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  let error: unknown;
  p.then(
    () => (state = 'resolved'),
    (e: unknown) => {
      state = 'rejected';
      error = e;
    },
  );
  return { state: () => state, error: () => error };
}

describe('KafkaPublisher', () => {
  it('keeps one send in flight per partition; publishes that arrive meanwhile go out together, in order', async () => {
    const { producer, publisher } = setup();
    const first = watch(publisher.publish('calls', [msg('a')]));
    await settle();
    const later = [
      watch(publisher.publish('calls', [msg('b'), msg('c')])),
      watch(publisher.publish('calls', [msg('d')])),
    ];
    await settle();
    expect(producer.sends).toEqual([{ topic: 'calls', values: ['a'] }]);
    producer.finishNext();
    await settle();
    expect(first.state()).toBe('resolved');
    expect(later.map((w) => w.state())).toEqual(['pending', 'pending']);
    expect(producer.sends[1]).toEqual({ topic: 'calls', values: ['b', 'c', 'd'] });
    producer.finishNext();
    await settle();
    expect(later.map((w) => w.state())).toEqual(['resolved', 'resolved']);
    expect(Math.max(...producer.maxInFlight.values())).toBe(1);
  });

  it('splits a publish spanning partitions into one send per partition, sent side by side', async () => {
    const { producer, publisher } = setup();
    const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const partitions = new Set(keys.map((k) => partitionForKey(k, 4)));
    const done = watch(
      publisher.publish(
        'calls',
        keys.map((k) => msg(k, k)),
      ),
    );
    await settle();
    expect(producer.sends).toHaveLength(partitions.size);
    expect(producer.unfinished).toBe(partitions.size);
    expect(producer.sends.flatMap((s) => s.values).sort()).toEqual(keys);
    for (let i = 1; i < partitions.size; i += 1) producer.finishNext();
    await settle();
    expect(done.state()).toBe('pending');
    producer.finishNext();
    await settle();
    expect(done.state()).toBe('resolved');
  });

  it('lets other topics send while one topic waits', async () => {
    const { producer, publisher } = setup();
    const calls = watch(publisher.publish('calls', [msg('a')]));
    const audit = watch(publisher.publish('audit', [msg('x')]));
    await settle();
    expect(producer.sends.map((s) => s.topic)).toEqual(['calls', 'audit']);
    expect(producer.unfinished).toBe(2);
    producer.finishNext();
    producer.finishNext();
    await settle();
    expect([calls.state(), audit.state()]).toEqual(['resolved', 'resolved']);
  });

  it('under many concurrent publishers: never two sends per partition, every message sent once, in order per key', async () => {
    const { producer, publisher } = setup();
    const publishedPerKey = new Map<string, string[]>();
    const all: Array<Promise<void>> = [];
    for (let i = 0; i < 300; i += 1) {
      const topic = i % 3 === 0 ? 'results' : 'calls';
      const key = `k${i % 13}`;
      const value = `${topic}-${i}`;
      if (topic === 'calls') publishedPerKey.set(key, [...(publishedPerKey.get(key) ?? []), value]);
      all.push(publisher.publish(topic, [msg(value, key)]));
      if (i % 11 === 0) {
        await settle();
        while (producer.unfinished > 0) producer.finishNext();
      }
    }
    for (let round = 0; round < 50; round += 1) {
      await settle();
      while (producer.unfinished > 0) producer.finishNext();
    }
    await Promise.all(all);
    expect(Math.max(...producer.maxInFlight.values())).toBe(1);
    const sentCalls = producer.sends.filter((s) => s.topic === 'calls').flatMap((s) => s.values);
    expect(sentCalls).toHaveLength(200);
    for (const [key, values] of publishedPerKey) {
      expect(
        sentCalls.filter((v) => values.includes(v)),
        key,
      ).toEqual(values);
    }
  });

  it('a failed send rejects only the publishes in it; the next ones still go', async () => {
    const { producer, publisher } = setup();
    const first = watch(publisher.publish('calls', [msg('a')]));
    await settle();
    const second = watch(publisher.publish('calls', [msg('b')]));
    await settle();
    producer.finishNext(new Error('MESSAGE_TOO_LARGE'));
    await settle();
    expect(first.state()).toBe('rejected');
    expect((first.error() as Error).message).toBe('MESSAGE_TOO_LARGE');
    expect(second.state()).toBe('pending');
    expect(producer.sends[1]).toEqual({ topic: 'calls', values: ['b'] });
    producer.finishNext();
    await settle();
    expect(second.state()).toBe('resolved');
  });

  it('rejects an unknown topic and a partition beyond the count before anything is sent', async () => {
    const producer = new StandInProducer();
    const publisher = new KafkaPublisher(
      producer as unknown as Producer,
      () => Promise.resolve(),
      (topic) => Promise.resolve(topic === 'calls' ? 2 : undefined),
    );
    await expect(publisher.publish('nope', [msg('a')])).rejects.toThrow(/unknown topic/);
    await expect(publisher.publish('calls', [{ ...msg('a'), partition: 2 }])).rejects.toThrow(RangeError);
    expect(producer.sends).toEqual([]);
  });
});
