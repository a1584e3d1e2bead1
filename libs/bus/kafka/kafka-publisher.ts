import type { Producer } from 'kafkajs';
import type { EventPublisher, OutgoingMessage } from '../../ports/event-bus.js';
import { validateOutgoing, validateTopicName } from '../validate.js';

/**
 * EventPublisher over a kafkajs idempotent producer (see createKafkaEventBus for its settings).
 *
 * The idempotent producer retries a failed send without bound, keeping the batch's sequence
 * numbers, which is what makes a retry neither duplicate nor reorder. A send to a topic that does
 * not exist would therefore retry forever; each topic's existence is checked once per publisher
 * instead, so such a publish rejects at once.
 */
export class KafkaPublisher implements EventPublisher {
  private readonly knownTopics = new Set<string>();

  constructor(
    private readonly producer: Producer,
    private readonly ready: () => Promise<void>,
    private readonly topicExists: (topic: string) => Promise<boolean>,
  ) {}

  async publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    validateTopicName(topic);
    validateOutgoing(messages);
    if (messages.length === 0) return;
    await this.ready();
    if (!this.knownTopics.has(topic)) {
      if (!(await this.topicExists(topic))) {
        throw new Error(`unknown topic ${JSON.stringify(topic)}: create it with ensureTopics`);
      }
      this.knownTopics.add(topic);
    }
    await this.producer.send({
      topic,
      acks: -1,
      messages: messages.map((m) => ({
        key: m.key,
        value: m.value,
        ...(m.headers === undefined ? {} : { headers: { ...m.headers } }),
      })),
    });
  }
}
