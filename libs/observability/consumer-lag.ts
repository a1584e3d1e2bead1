import { Kafka, logLevel, type Admin, type KafkaConfig } from 'kafkajs';
import { kafkaLogCreator } from '../bus/kafka/kafka-log-creator.js';
import type { Logger } from '../ports/logger.js';

/** How far one consumer group is behind on one partition. */
export interface PartitionLag {
  /** The consumer group (executors, audit sink, reconciler each have their own). */
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
  /** Messages at or after the group's committed position: high watermark − max(committed, low). */
  readonly lag: number;
}

/**
 * Reads a group's lag on every partition of its topics. What metrics call at scrape time; any
 * transport can provide one (the memory bus, a test, Kafka below). Rejects when it cannot tell —
 * it never reports a guess.
 */
export type ConsumerLagReader = () => Promise<readonly PartitionLag[]>;

/** What {@link kafkaConsumerLag} reads from. */
export interface KafkaConsumerLagOptions {
  /** A connected kafkajs admin client; the caller owns (and disconnects) it. */
  readonly admin: Pick<Admin, 'fetchOffsets' | 'fetchTopicOffsets'>;
  readonly groupId: string;
  readonly topics: readonly string[];
}

/**
 * Consumer lag from Kafka: for each partition, the high watermark (`fetchTopicOffsets`) minus the
 * group's committed offset (`fetchOffsets`).
 *
 * - A partition the group never committed on counts everything retained (high − low): those
 *   messages are waiting for the group. (Subscriptions through libs/bus commit their start position
 *   at once, so this is only seen before a member joined.)
 * - A committed offset below the log start (retention removed messages) counts from the log start:
 *   what is gone cannot be consumed any more.
 * - Lag is never negative.
 *
 * Each call makes one `fetchOffsets` and one `fetchTopicOffsets` per topic; no state is kept, so
 * the reader may be called concurrently and after broker restarts.
 */
export function kafkaConsumerLag(options: KafkaConsumerLagOptions): ConsumerLagReader {
  const { admin, groupId } = options;
  const topics = [...options.topics];
  return async () => {
    const [committed, ends] = await Promise.all([
      admin.fetchOffsets({ groupId, topics }),
      Promise.all(topics.map(async (topic) => ({ topic, offsets: await admin.fetchTopicOffsets(topic) }))),
    ]);
    const committedAt = new Map<string, bigint>();
    for (const t of committed) {
      for (const p of t.partitions) committedAt.set(`${t.topic}\u0000${p.partition}`, BigInt(p.offset));
    }
    const lags: PartitionLag[] = [];
    for (const { topic, offsets } of ends) {
      for (const p of offsets) {
        const high = BigInt(p.high);
        const low = BigInt(p.low);
        const done = committedAt.get(`${topic}\u0000${p.partition}`) ?? -1n;
        const from = done < low ? low : done;
        const lag = high > from ? high - from : 0n;
        lags.push({ group: groupId, topic, partition: p.partition, lag: Number(lag) });
      }
    }
    return lags.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  };
}

/** What {@link kafkaLagSource} connects to and reads. */
export interface KafkaLagSourceOptions {
  readonly brokers: readonly string[];
  /** The admin client's id (e.g. `<instance id>-lag`), as brokers log it. */
  readonly clientId: string;
  /** Where kafkajs' own warnings and errors go (use `busLogger`). */
  readonly logger: Logger;
  readonly groupId: string;
  readonly topics: readonly string[];
  /** TLS / SASL settings, as the service's bus has them. */
  readonly connection?: Pick<KafkaConfig, 'ssl' | 'sasl' | 'connectionTimeout' | 'requestTimeout'>;
}

/** A {@link ConsumerLagReader} with its own admin client, and the way to close it. */
export interface KafkaLagSource {
  readonly read: ConsumerLagReader;
  /** Disconnects the admin client; later reads reject. Idempotent. */
  close(): Promise<void>;
}

/**
 * {@link kafkaConsumerLag} on an admin client of its own, connected on the first read (so a
 * service starts without it and a scrape during a broker outage just fails that source). A failed
 * connect is retried on the next read. Use one per process and close it on shutdown.
 */
export function kafkaLagSource(options: KafkaLagSourceOptions): KafkaLagSource {
  const admin = new Kafka({
    ...options.connection,
    clientId: options.clientId,
    brokers: [...options.brokers],
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(options.logger),
  }).admin();
  const lag = kafkaConsumerLag({ admin, groupId: options.groupId, topics: options.topics });
  let connecting: Promise<void> | undefined;
  let closed = false;
  return {
    async read() {
      if (closed) throw new Error('the consumer lag source is closed');
      connecting ??= admin.connect().catch((err: unknown) => {
        connecting = undefined;
        throw err;
      });
      await connecting;
      return lag();
    },
    async close() {
      if (closed) return;
      closed = true;
      if (connecting !== undefined) await admin.disconnect().catch(() => undefined);
    },
  };
}
