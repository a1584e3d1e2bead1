import type { Message, Producer } from 'kafkajs';
import type { EventPublisher, OutgoingMessage } from '../../ports/event-bus.js';
import { coalescingPublisher } from '../coalescing-publisher.js';
import { partitionForKey } from '../partitioner.js';
import { validateOutgoing, validateTopicName } from '../validate.js';

/** How long a topic's partition count is trusted before it is looked up again (kafkajs' metadata age). */
const PARTITION_COUNT_MAX_AGE_MS = 300_000;

/**
 * EventPublisher over a kafkajs idempotent producer (see createKafkaEventBus for its settings).
 *
 * **Each `send()` carries one partition's records, and one partition has one send in flight.**
 * The idempotent producer retries a failed send without bound, keeping the batch's sequence
 * numbers, which is what makes a retry neither duplicate nor reorder. Two defects of kafkajs 2.2
 * around a leader's death would otherwise lose acknowledged records (both shown by the chaos
 * suite's Kafka leader failover):
 * - It rolls a partition's sequence back whenever a produce request fails, also when the outcome
 *   is unknown (the connection closed after the leader had appended and replicated the batch). A
 *   second send to that partition queued behind the failed one goes out with the rolled-back
 *   sequence; the new leader, which holds a batch with it, answers "duplicate" with success, and
 *   that send resolves without its records ever being written. With one send in flight per
 *   partition, the only batch that can take a rolled-back sequence is the failed one's own retry,
 *   which carries the same records.
 * - A send's retry goes only to brokers that have not answered that send yet. When a partition's
 *   leadership moves to a broker that already answered for the send's other partitions, the
 *   partition's records are never re-sent and the send resolves. A send with one partition's
 *   records has exactly one broker to hear from.
 *
 * The partition is chosen here, with the producer's own partitioner (`partitionForKey`, murmur2),
 * from a partition count looked up once per topic and again every 5 minutes or when a message
 * names a partition beyond it. Publishes that arrive while their partition's send is in flight
 * share its next send ({@link coalescingPublisher}: arrival order, a byte cap per send), so
 * concurrent publishers share produce requests instead of queueing one each. A publish spanning
 * partitions resolves once each partition's send carrying it is acknowledged and rejects when one
 * fails (the others may have been written, as with any failed multi-partition publish); a joined
 * send that fails rejects every publish in it. Only non-retriable errors end a send.
 *
 * A send to a topic (or an explicit partition) that does not exist would retry forever: such a
 * publish rejects at once and alone.
 */
export class KafkaPublisher implements EventPublisher {
  private readonly knownTopics = new Map<string, { readonly count: number; readonly atMs: number }>();
  private readonly sends: EventPublisher;

  constructor(
    producer: Producer,
    private readonly ready: () => Promise<void>,
    private readonly partitionCount: (topic: string) => Promise<number | undefined>,
  ) {
    this.sends = coalescingPublisher(
      {
        publish: (topic, messages) =>
          producer.send({ topic, acks: -1, messages: messages.map(toKafkaMessage) }).then(() => undefined),
      },
      { laneWithinTopic: (messages) => messages[0]!.partition! },
    );
  }

  async publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    validateTopicName(topic);
    validateOutgoing(messages);
    if (messages.length === 0) return;
    await this.ready();
    const highest = messages.reduce((max, m) => Math.max(max, m.partition ?? -1), -1);
    let known = this.knownTopics.get(topic);
    if (
      known === undefined ||
      highest >= known.count ||
      Date.now() - known.atMs > PARTITION_COUNT_MAX_AGE_MS
    ) {
      const count = await this.partitionCount(topic);
      if (count === undefined) {
        throw new Error(`unknown topic ${JSON.stringify(topic)}: create it with ensureTopics`);
      }
      known = { count, atMs: Date.now() };
      this.knownTopics.set(topic, known);
    }
    if (highest >= known.count) throw new RangeError(`topic ${topic} has no partition ${highest}`);
    const byPartition = new Map<number, OutgoingMessage[]>();
    for (const m of messages) {
      const partition = m.partition ?? partitionForKey(m.key, known.count);
      const group = byPartition.get(partition);
      const placed = m.partition === undefined ? { ...m, partition } : m;
      if (group === undefined) byPartition.set(partition, [placed]);
      else group.push(placed);
    }
    await Promise.all([...byPartition.values()].map((group) => this.sends.publish(topic, group)));
  }
}

function toKafkaMessage(m: OutgoingMessage): Message {
  return {
    key: m.key,
    value: m.value,
    ...(m.headers === undefined ? {} : { headers: { ...m.headers } }),
    ...(m.partition === undefined ? {} : { partition: m.partition }),
  };
}
