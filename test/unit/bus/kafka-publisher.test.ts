import type { Message, Producer, ProducerRecord, RecordMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { KafkaPublisher } from '../../../libs/bus/kafka/kafka-publisher.js';
import { partitionForKey } from '../../../libs/bus/partitioner.js';
import type { OutgoingMessage } from '../../../libs/ports/event-bus.js';

/**
 * The publisher's promises to the idempotent producer, around two kafkajs defects that lose
 * acknowledged records in a leader failover: never two sends to one topic at once (a second send
 * could take the sequence numbers kafkajs rolled back after a failed request, and be answered
 * "duplicate" without being written), and no record counted as sent unless its partition is in the
 * send's answer (a kafkajs retry skips a partition whose leadership moved to a broker that had
 * already answered for the send's other partitions, and resolves without it). These tests drive a
 * stand-in producer whose sends finish when the test says; the leader failover itself is in the
 * chaos suite (kafka-failover).
 */
class StandInProducer {
  readonly sends: Array<{ topic: string; values: string[]; partitions: number[] }> = [];
  readonly inFlight = new Map<string, number>();
  readonly maxInFlight = new Map<string, number>();
  /** Partitions the next answers leave out, as kafkajs does after defect 2 (one entry per answer). */
  readonly leaveOut: number[][] = [];
  private readonly finishers: Array<(error?: Error) => void> = [];

  send(record: ProducerRecord): Promise<RecordMetadata[]> {
    const partitions = record.messages.map((m: Message) => m.partition);
    if (partitions.some((p) => p === undefined)) {
      return Promise.reject(new Error('every record must name its partition'));
    }
    const named = partitions as number[];
    this.sends.push({
      topic: record.topic,
      values: record.messages.map((m) => String(m.value)),
      partitions: named,
    });
    const now = (this.inFlight.get(record.topic) ?? 0) + 1;
    this.inFlight.set(record.topic, now);
    this.maxInFlight.set(record.topic, Math.max(now, this.maxInFlight.get(record.topic) ?? 0));
    const leftOut = new Set(this.leaveOut.shift() ?? []);
    return new Promise<RecordMetadata[]>((resolve, reject) => {
      this.finishers.push((error) => {
        this.inFlight.set(record.topic, this.inFlight.get(record.topic)! - 1);
        if (error !== undefined) return reject(error);
        const answered = [...new Set(named)].filter((p) => !leftOut.has(p));
        resolve(answered.map((partition) => ({ topicName: record.topic, partition, errorCode: 0 })));
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

const PARTITIONS = 4;

function setup(): { producer: StandInProducer; publisher: KafkaPublisher } {
  const producer = new StandInProducer();
  const publisher = new KafkaPublisher(
    producer as unknown as Producer,
    () => Promise.resolve(),
    () => Promise.resolve(PARTITIONS),
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
  it('names each record its key partition (murmur2), an explicit one as given', async () => {
    const { producer, publisher } = setup();
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    const done = publisher.publish('calls', [
      ...keys.map((k) => msg(k, k)),
      { ...msg('to-2', 'x'), partition: 2 },
    ]);
    await settle();
    producer.finishNext();
    await done;
    expect(producer.sends[0]!.partitions).toEqual([...keys.map((k) => partitionForKey(k, PARTITIONS)), 2]);
  });

  it('keeps one send in flight per topic; publishes that arrive meanwhile go out together, in order', async () => {
    const { producer, publisher } = setup();
    const first = watch(publisher.publish('calls', [msg('a')]));
    await settle();
    const later = [
      watch(publisher.publish('calls', [msg('b', 'k1'), msg('c', 'k2')])),
      watch(publisher.publish('calls', [msg('d', 'k3')])),
    ];
    await settle();
    expect(producer.sends.map((s) => s.values)).toEqual([['a']]);
    producer.finishNext();
    await settle();
    expect(first.state()).toBe('resolved');
    expect(later.map((w) => w.state())).toEqual(['pending', 'pending']);
    expect(producer.sends[1]!.values).toEqual(['b', 'c', 'd']);
    producer.finishNext();
    await settle();
    expect(later.map((w) => w.state())).toEqual(['resolved', 'resolved']);
    expect(producer.maxInFlight.get('calls')).toBe(1);
  });

  it('lets other topics send while one topic waits', async () => {
    const { producer, publisher } = setup();
    const calls = watch(publisher.publish('calls', [msg('a')]));
    const audit = watch(publisher.publish('audit', [msg('x')]));
    await settle();
    expect(producer.sends.map((s) => s.topic)).toEqual(['calls', 'audit']);
    producer.finishNext();
    producer.finishNext();
    await settle();
    expect([calls.state(), audit.state()]).toEqual(['resolved', 'resolved']);
  });

  it('sends again the records of a partition the answer left out, and only those, before resolving', async () => {
    const { producer, publisher } = setup();
    const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const partitions = [...new Set(keys.map((k) => partitionForKey(k, PARTITIONS)))];
    expect(partitions.length).toBeGreaterThan(1);
    const skipped = partitions[0]!;
    producer.leaveOut.push([skipped]);
    const done = watch(
      publisher.publish(
        'calls',
        keys.map((k) => msg(k, k)),
      ),
    );
    await settle();
    producer.finishNext();
    await settle();
    expect(done.state()).toBe('pending');
    expect(producer.sends).toHaveLength(2);
    expect(producer.sends[1]!.values).toEqual(keys.filter((k) => partitionForKey(k, PARTITIONS) === skipped));
    expect(new Set(producer.sends[1]!.partitions)).toEqual(new Set([skipped]));
    producer.finishNext();
    await settle();
    expect(done.state()).toBe('resolved');
    expect(producer.maxInFlight.get('calls')).toBe(1);
  });

  it('rejects when a partition stays unacknowledged, naming it', async () => {
    const { producer, publisher } = setup();
    const partition = partitionForKey('k', PARTITIONS);
    for (let i = 0; i < 11; i++) producer.leaveOut.push([partition]);
    const done = watch(publisher.publish('calls', [msg('a')]));
    for (let i = 0; i < 11; i++) {
      await settle();
      producer.finishNext();
    }
    await settle();
    expect(done.state()).toBe('rejected');
    expect((done.error() as Error).message).toBe(
      `topic calls: partitions ${partition} were not acknowledged after 11 sends`,
    );
  });

  it('under many concurrent publishers: never two sends per topic, every message sent once, in arrival order', async () => {
    const { producer, publisher } = setup();
    const published: string[] = [];
    const all: Array<Promise<void>> = [];
    for (let i = 0; i < 300; i += 1) {
      const topic = i % 3 === 0 ? 'results' : 'calls';
      const value = `${topic}-${i}`;
      if (topic === 'calls') published.push(value);
      all.push(publisher.publish(topic, [msg(value, `k${i % 13}`)]));
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
    expect(producer.maxInFlight.get('calls')).toBe(1);
    expect(producer.maxInFlight.get('results')).toBe(1);
    const sentCalls = producer.sends.filter((s) => s.topic === 'calls').flatMap((s) => s.values);
    expect(sentCalls).toEqual(published);
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
    expect(producer.sends[1]!.values).toEqual(['b']);
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
