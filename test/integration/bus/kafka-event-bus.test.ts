import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaEventBus } from '../../../libs/bus/kafka/kafka-event-bus.js';
import { partitionForKey } from '../../../libs/bus/partitioner.js';
import type { Subscription } from '../../../libs/ports/event-bus.js';
import { createTestKafka, type TestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { eventually, gate, numbered, Received, seqOf } from './bus-fixtures.js';

/**
 * What only the Kafka adapter can show: the offsets it commits as the broker stores them, the
 * idempotent producer under concurrent publishes, and records written by other clients.
 */
describe('KafkaEventBus against a real broker', () => {
  let tk: TestKafka;
  let bus: KafkaEventBus;
  const subscriptions: Subscription[] = [];

  const committed = async (groupId: string, topic: string): Promise<string[]> => {
    const [entry] = await (await tk.admin()).fetchOffsets({ groupId, topics: [topic] });
    return (entry?.partitions ?? []).sort((a, b) => a.partition - b.partition).map((p) => p.offset);
  };

  beforeAll(() => {
    tk = createTestKafka('bus-kafka');
    bus = new KafkaEventBus({
      brokers: tk.brokers,
      clientId: uniqueName('bus-kafka'),
      logLevel: 'nothing',
      sessionTimeoutMs: 6_000,
      rebalanceTimeoutMs: 15_000,
      heartbeatIntervalMs: 300,
      maxWaitTimeMs: 100,
      commitIntervalMs: 100,
      redeliveryDelayMs: 20,
    });
  });
  afterAll(async () => {
    await Promise.all(subscriptions.map((s) => s.stop()));
    await bus.close();
    await tk.close();
  });

  it('commits the finished prefix while a batch is still running', async () => {
    const topic = await tk.uniqueTopic('midbatch', 1);
    const groupId = tk.uniqueGroupId('midbatch');
    await bus.publish(topic, numbered(6, ['k']));
    const hold = gate();
    let reached = false;
    subscriptions.push(
      await bus.subscribe({ groupId, topics: [topic], fromBeginning: true }, async (batch, control) => {
        for (const m of batch.messages) {
          if (m.offset === '3' && !reached) {
            reached = true;
            await hold.wait;
          }
          control.markDone(m.offset);
        }
      }),
    );
    await eventually(() => expect(reached).toBe(true));
    // The handler is parked at offset 3 with 0..2 finished: the broker must already hold 3.
    await eventually(async () => expect(await committed(groupId, topic)).toEqual(['3']));
    hold.open();
    await eventually(async () => expect(await committed(groupId, topic)).toEqual(['6']));
  });

  it('commits a latest-group’s start position as soon as subscribe resolves', async () => {
    const topic = await tk.uniqueTopic('pin', 2);
    const groupId = tk.uniqueGroupId('pin');
    await bus.publish(topic, numbered(10, ['a', 'b', 'c']));
    const ends = (await (await tk.admin()).fetchTopicOffsets(topic))
      .sort((a, b) => a.partition - b.partition)
      .map((p) => p.high);
    const sub = await bus.subscribe({ groupId, topics: [topic], fromBeginning: false }, () =>
      Promise.resolve(),
    );
    subscriptions.push(sub);
    expect(await committed(groupId, topic)).toEqual(ends);
  });

  it('lands every message of many concurrent publish calls (idempotent producer), each once', async () => {
    const topic = await tk.uniqueTopic('concurrent', 3);
    const keys = Array.from({ length: 12 }, (_, i) => `key-${i}`);
    const messages = numbered(120, keys);
    await Promise.all(messages.map((m) => bus.publish(topic, [m])));
    const got = new Received();
    subscriptions.push(
      await bus.subscribe(
        { groupId: tk.uniqueGroupId('concurrent'), topics: [topic], fromBeginning: true },
        got.handler(),
      ),
    );
    await got.waitFor(120);
    expect(got.seqs().sort((a, b) => a - b)).toEqual(Array.from({ length: 120 }, (_, i) => i));
    const ends = await (await tk.admin()).fetchTopicOffsets(topic);
    expect(ends.reduce((sum, p) => sum + Number(p.high), 0)).toBe(120);
    for (const m of got.messages) expect(m.partition).toBe(partitionForKey(m.key, 3));
  });

  it('reads records from other clients: null key as "", repeated header as its last value', async () => {
    const topic = await tk.uniqueTopic('foreign', 1);
    const producer = tk.producer();
    await producer.connect();
    await producer.send({
      topic,
      messages: [
        { key: null, value: Buffer.from('0'), headers: { h: ['first', 'last'], b: Buffer.from('bytes') } },
        { key: 'k', value: null },
      ],
    });
    const got = new Received();
    subscriptions.push(
      await bus.subscribe(
        { groupId: tk.uniqueGroupId('foreign'), topics: [topic], fromBeginning: true },
        got.handler(),
      ),
    );
    await got.waitFor(2);
    expect(got.messages[0]!.key).toBe('');
    expect(seqOf(got.messages[0]!)).toBe(0);
    expect(got.messages[0]!.headers).toEqual({ h: 'last', b: 'bytes' });
    expect(got.messages[1]!.value.length).toBe(0);
  });
});
