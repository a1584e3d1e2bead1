import kafkajs, { type Admin, type ITopicMetadata } from 'kafkajs';
import { retryWithBackoff } from '../../core/backoff.js';
import { systemClock } from '../../core/system-clock.js';
import type { TopicAdmin, TopicSpec } from '../../ports/event-bus.js';
import { validateTopicSpecs } from '../validate.js';
import { isUnknownTopicError } from './kafka-errors.js';

// kafkajs is CommonJS and its enums are not detectable as named ESM exports: read them off the default.

/** How long an unknown topic is asked for again before it counts as missing (see `partitionCount`). */
const UNKNOWN_TOPIC_WAIT_MS = 5_000;

/**
 * TopicAdmin over a kafkajs admin client (connected by the owner). Creation waits for partition
 * leaders, so a producer can publish as soon as `ensureTopics` resolves; a created topic gets its
 * spec's `configs`, an existing one is left as it is.
 */
export class KafkaTopicAdmin implements TopicAdmin {
  /**
   * @param leaderWaitMs how long `ensureTopics` waits for a created topic's partitions to have
   *   leaders on the broker it asks before it rejects.
   */
  constructor(
    private readonly admin: Admin,
    private readonly leaderWaitMs = 30_000,
  ) {}

  async ensureTopics(specs: readonly TopicSpec[]): Promise<void> {
    validateTopicSpecs(specs);
    const unique = [...new Map(specs.map((s) => [s.topic, s])).values()];
    if (unique.length === 0) return;
    const existing = new Set(await this.admin.listTopics());
    const missing = unique.filter((s) => !existing.has(s.topic));
    if (missing.length > 0) {
      // kafkajs resolves false (instead of throwing) when every topic already exists, so two
      // services starting at once both succeed. Its own wait for leaders gives up when the broker
      // it asks has not yet heard of the new topic (UNKNOWN_TOPIC_OR_PARTITION), which on a
      // cluster is ordinary for a moment after creation: the wait below retries through that.
      await this.admin.createTopics({
        waitForLeaders: false,
        topics: missing.map((s) => ({
          topic: s.topic,
          numPartitions: s.partitions,
          replicationFactor: s.replicationFactor ?? -1,
          configEntries: Object.entries(s.configs ?? {}).map(([name, value]) => ({ name, value })),
        })),
      });
    }
    const topics = await this.waitForLeaders(unique.map((s) => s.topic));
    for (const spec of unique) {
      const found = topics.find((t) => t.name === spec.topic);
      const count = found?.partitions.length ?? 0;
      if (count !== spec.partitions) {
        throw new Error(`topic ${spec.topic} exists with ${count} partitions, not ${spec.partitions}`);
      }
    }
  }

  /**
   * The topics' metadata once every partition of each has a leader. Retries, for at most
   * `leaderWaitMs`, a broker that does not know a topic yet or reports a partition without a leader;
   * then rejects with the last reason.
   */
  private async waitForLeaders(names: readonly string[]): Promise<ITopicMetadata[]> {
    const deadline = Date.now() + this.leaderWaitMs;
    return retryWithBackoff(
      async () => {
        const { topics } = await this.admin.fetchTopicMetadata({ topics: [...names] });
        const leaderless = topics.flatMap((t) =>
          t.partitions.filter((p) => p.leader < 0).map((p) => `${t.name}[${p.partitionId}]`),
        );
        if (leaderless.length > 0) throw new Error(`no leader yet for ${leaderless.join(', ')}`);
        return topics;
      },
      {
        backoff: { baseDelayMs: 50, maxDelayMs: 1_000 },
        clock: systemClock,
        isFatal: () => Date.now() >= deadline,
      },
    );
  }

  /**
   * The effective value of one config of an existing topic (set on the topic, or the broker's
   * default), or undefined when the broker does not report it. Rejects when the topic does not exist
   * or the broker cannot be asked.
   */
  async topicConfig(topic: string, name: string): Promise<string | undefined> {
    const { resources } = await this.admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic, configNames: [name] }],
    });
    const resource = resources.find((r) => r.resourceName === topic);
    if (resource !== undefined && resource.errorCode !== 0) {
      throw new Error(
        `cannot describe topic ${topic}: ${resource.errorMessage ?? `error ${resource.errorCode}`}`,
      );
    }
    return resource?.configEntries.find((e) => e.configName === name)?.configValue ?? undefined;
  }

  /** Whether the topic exists on the cluster (one metadata round trip). */
  async exists(topic: string): Promise<boolean> {
    return (await this.admin.listTopics()).includes(topic);
  }

  /**
   * The topic's partition count, or undefined when it does not exist. On a cluster a topic created
   * a moment ago may be unknown to the broker asked (metadata reaches brokers asynchronously): one
   * broker may list it while the one asked for its metadata answers "does not host this
   * topic-partition". Either way the topic is asked for again for up to 5 s before it counts as
   * missing.
   */
  async partitionCount(topic: string): Promise<number | undefined> {
    const deadline = Date.now() + UNKNOWN_TOPIC_WAIT_MS;
    return retryWithBackoff(
      async () => {
        if (!(await this.exists(topic))) throw new UnknownTopic();
        const { topics } = await this.admin.fetchTopicMetadata({ topics: [topic] }).catch((err: unknown) => {
          throw isUnknownTopicError(err) ? new UnknownTopic() : err;
        });
        const count = topics.find((t) => t.name === topic)?.partitions.length;
        if (count === undefined || count === 0) throw new UnknownTopic();
        return count;
      },
      {
        backoff: { baseDelayMs: 50, maxDelayMs: 500 },
        clock: systemClock,
        isFatal: (err) => !(err instanceof UnknownTopic) || Date.now() >= deadline,
      },
    ).catch((err: unknown) => {
      if (err instanceof UnknownTopic) return undefined;
      throw err;
    });
  }
}

/** A topic the broker asked does not list (yet): retried by `partitionCount` until its deadline. */
class UnknownTopic extends Error {
  constructor() {
    super('the broker asked does not know the topic (yet)');
  }
}
