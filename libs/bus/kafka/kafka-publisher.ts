import type { Message, Producer } from 'kafkajs';
import type { EventPublisher, OutgoingMessage } from '../../ports/event-bus.js';
import { coalescingPublisher } from '../coalescing-publisher.js';
import { partitionForKey } from '../partitioner.js';
import { validateOutgoing, validateTopicName } from '../validate.js';

/** How long a topic's partition count is trusted before it is looked up again (kafkajs' metadata age). */
const PARTITION_COUNT_MAX_AGE_MS = 300_000;

/**
 * How many times records that a resolved send did not acknowledge are sent again before the
 * publish rejects. Each send retries on its own without bound; a partition left out of a send's
 * answer is the rare case below, so one more send is what it takes in practice.
 */
const UNACKNOWLEDGED_RESENDS = 10;

/**
 * EventPublisher over a kafkajs idempotent producer (see createKafkaEventBus for its settings).
 *
 * The idempotent producer retries a failed send without bound, keeping the batch's sequence
 * numbers, which is what makes a retry neither duplicate nor reorder. Two defects of kafkajs 2.2
 * around a leader's death would still lose acknowledged records (both shown by the chaos suite's
 * Kafka leader failover); this publisher closes both:
 * - **One send in flight per topic.** kafkajs rolls a partition's sequence back whenever a produce
 *   request fails, also when the outcome is unknown (the connection closed after the leader had
 *   appended and replicated the batch). A second send to that partition queued behind the failed
 *   one would go out with the rolled-back sequence; the new leader, which holds a batch with it,
 *   answers "duplicate" with success, and that send resolves without its records ever being
 *   written. With one send per topic in flight, the only batch that can take a rolled-back
 *   sequence is the failed one's own retry, which carries the same records.
 * - **Every partition's acknowledgement is checked.** A send's retry goes only to brokers that have
 *   not answered that send yet: when a partition's leadership moves to a broker that already
 *   answered for the send's other partitions, that partition's records are never re-sent, and the
 *   send resolves without them. The partition of each record is chosen here (the producer's own
 *   murmur2, `partitionForKey`), so the publisher knows which partitions a send must answer for;
 *   records of a partition missing from the answer are sent again (their sequence was rolled
 *   back with the failed request, so if that request had in fact been written, the new leader
 *   recognizes them as duplicates instead of writing them twice).
 *
 * Publishes that arrive while their topic's send is in flight share its next send
 * ({@link coalescingPublisher}: arrival order, a byte cap per send), so concurrent publishers share
 * produce requests. Each `publish()` resolves once its own records are acknowledged; a joined send
 * that fails rejects every publish in it (some of their records may have been written, as with any
 * failed multi-partition publish; only non-retriable errors end a send).
 *
 * A send to a topic (or an explicit partition) that does not exist would retry forever; each
 * topic's partition count is looked up once (again every 5 minutes, or when a message names a
 * partition beyond it), so such a publish rejects, alone, within seconds (a topic created a moment
 * ago is asked for again for up to 5 s, since a broker may not know it yet).
 */
export class KafkaPublisher implements EventPublisher {
  private readonly knownTopics = new Map<string, { readonly count: number; readonly atMs: number }>();
  private readonly sends: EventPublisher;

  constructor(
    private readonly producer: Producer,
    private readonly ready: () => Promise<void>,
    private readonly partitionCount: (topic: string) => Promise<number | undefined>,
  ) {
    this.sends = coalescingPublisher({
      publish: (topic, messages) => this.sendAcknowledged(topic, messages),
    });
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
    const { count } = known;
    await this.sends.publish(
      topic,
      messages.map((m) =>
        m.partition === undefined ? { ...m, partition: partitionForKey(m.key, count) } : m,
      ),
    );
  }

  /**
   * Sends `messages` (each with its partition) and sends again the records of every partition the
   * answer leaves out, until each partition has answered. Rejects with the send's error, or when a
   * partition is still missing after {@link UNACKNOWLEDGED_RESENDS} more sends.
   */
  private async sendAcknowledged(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    let pending = messages;
    for (let resend = 0; ; resend++) {
      const answered = await this.producer.send({ topic, acks: -1, messages: pending.map(toKafkaMessage) });
      const acknowledged = new Set(answered.filter((r) => r.topicName === topic).map((r) => r.partition));
      pending = pending.filter((m) => !acknowledged.has(m.partition!));
      if (pending.length === 0) return;
      if (resend === UNACKNOWLEDGED_RESENDS) {
        const partitions = [...new Set(pending.map((m) => m.partition))].join(', ');
        throw new Error(
          `topic ${topic}: partitions ${partitions} were not acknowledged after ${resend + 1} sends`,
        );
      }
    }
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
