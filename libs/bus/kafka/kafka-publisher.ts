import type { Producer } from 'kafkajs';
import type { EventPublisher, OutgoingMessage } from '../../ports/event-bus.js';
import { validateOutgoing, validateTopicName } from '../validate.js';

/**
 * EventPublisher over a kafkajs idempotent producer (see createKafkaEventBus for its settings).
 *
 * The idempotent producer retries a failed send without bound, keeping the batch's sequence
 * numbers, which is what makes a retry neither duplicate nor reorder. A send to a topic (or an
 * explicit partition) that does not exist would therefore retry forever; each topic's partition
 * count is looked up once per publisher instead (again when a message names a partition beyond
 * it, since topics can grow), so such a publish rejects at once.
 */
export class KafkaPublisher implements EventPublisher {
  private readonly knownTopics = new Map<string, number>();

  constructor(
    private readonly producer: Producer,
    private readonly ready: () => Promise<void>,
    private readonly partitionCount: (topic: string) => Promise<number | undefined>,
  ) {}

  async publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    validateTopicName(topic);
    validateOutgoing(messages);
    if (messages.length === 0) return;
    await this.ready();
    const highest = messages.reduce((max, m) => Math.max(max, m.partition ?? -1), -1);
    let count = this.knownTopics.get(topic);
    if (count === undefined || highest >= count) {
      count = await this.partitionCount(topic);
      if (count === undefined) {
        throw new Error(`unknown topic ${JSON.stringify(topic)}: create it with ensureTopics`);
      }
      this.knownTopics.set(topic, count);
    }
    if (highest >= count) throw new RangeError(`topic ${topic} has no partition ${highest}`);
    await this.producer.send({
      topic,
      acks: -1,
      messages: messages.map((m) => ({
        key: m.key,
        value: m.value,
        ...(m.headers === undefined ? {} : { headers: { ...m.headers } }),
        ...(m.partition === undefined ? {} : { partition: m.partition }),
      })),
    });
  }
}
