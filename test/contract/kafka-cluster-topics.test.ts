import { ConfigResourceTypes } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaEventBus } from '../../libs/bus/kafka/kafka-event-bus.js';
import { retryWithBackoff } from '../../libs/core/backoff.js';
import { systemClock } from '../../libs/core/system-clock.js';
import { topicNames } from '../../libs/events/topics.js';
import { allTopics } from '../../libs/runtime/clients.js';
import { kafkaClusterBrokers } from '../helpers/env.js';
import { createTestKafka, type TestKafka } from '../helpers/kafka.js';
import { uniqueName } from '../helpers/names.js';

/**
 * What toolgate's topics look like when the services create them on the replicated cluster with
 * the production settings: every partition on three different brokers, all in sync, and
 * min.insync.replicas 2, so an acknowledged publish (the bus's producer uses acks=all) is on at
 * least two brokers.
 */
describe('toolgate topics on a 3-broker Kafka cluster', () => {
  let kafka: TestKafka;
  let bus: KafkaEventBus;
  const topics = topicNames(uniqueName('replicated'));

  beforeAll(async () => {
    kafka = createTestKafka('replicated', kafkaClusterBrokers());
    bus = new KafkaEventBus({
      brokers: kafka.brokers,
      clientId: uniqueName('replicated'),
      logLevel: 'error',
    });
    await bus.ensureTopics(
      allTopics(topics, { calls: 3, results: 3, audit: 2, dlq: 1 }).map((spec) => ({
        ...spec,
        replicationFactor: 3,
        configs: { ...spec.configs, 'min.insync.replicas': '2' },
      })),
    );
  });
  afterAll(async () => {
    await bus.close();
    await (await kafka.admin()).deleteTopics({ topics: Object.values(topics), timeout: 10_000 });
    await kafka.close();
  });

  it('puts every partition of every topic on all three brokers, in sync, with min.insync.replicas 2', async () => {
    const admin = await kafka.admin();
    const brokers = (await admin.describeCluster()).brokers.map((b) => b.nodeId).sort();
    expect(brokers).toHaveLength(3);
    // ensureTopics waited for leaders on the broker it asked; the broker this client asks may learn
    // of the new topics a moment later (metadata spreads asynchronously), and answers "does not
    // host this topic-partition" until then. Placement, not propagation speed, is under test here.
    const { topics: described } = await retryWithBackoff(
      () => admin.fetchTopicMetadata({ topics: Object.values(topics) }),
      {
        backoff: { baseDelayMs: 50, maxDelayMs: 500 },
        clock: systemClock,
        maxAttempts: 20,
        isFatal: (err) => (err as { type?: unknown }).type !== 'UNKNOWN_TOPIC_OR_PARTITION',
      },
    );
    for (const topic of described) {
      for (const partition of topic.partitions) {
        expect([...partition.replicas].sort(), `${topic.name}/${partition.partitionId}`).toEqual(brokers);
        expect([...partition.isr].sort(), `${topic.name}/${partition.partitionId}`).toEqual(brokers);
      }
    }
    const configs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: Object.values(topics).map((name) => ({
        type: ConfigResourceTypes.TOPIC,
        name,
        configNames: ['min.insync.replicas', 'message.timestamp.type'],
      })),
    });
    for (const resource of configs.resources) {
      const value = (name: string) => resource.configEntries.find((e) => e.configName === name)?.configValue;
      expect(value('min.insync.replicas'), resource.resourceName).toBe('2');
      if (resource.resourceName === topics.calls)
        expect(value('message.timestamp.type')).toBe('LogAppendTime');
    }
  });
});
