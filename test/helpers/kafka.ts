import type { Admin, Consumer, ConsumerConfig, IHeaders, Producer, ProducerConfig } from 'kafkajs';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { kafkaBrokers } from './env.js';
import { uniqueName } from './names.js';

/** A kafkajs client bound to the integration brokers, plus the topics and clients a test made. */
export interface TestKafka {
  readonly kafka: Kafka;
  readonly brokers: readonly string[];
  /** A connected admin client shared by the helpers; closed by {@link TestKafka.close}. */
  admin(): Promise<Admin>;
  /**
   * Creates a topic no other test uses (`<prefix>_<12 hex>`) with `partitions` partitions and
   * replication factor 1, waits until every partition has a leader, and returns its name.
   */
  uniqueTopic(prefix: string, partitions?: number): Promise<string>;
  /** A consumer group id no other test uses. */
  uniqueGroupId(prefix: string): string;
  /** A producer (Java-compatible murmur2 partitioner) that {@link TestKafka.close} disconnects. */
  producer(config?: ProducerConfig): Producer;
  /** A consumer that {@link TestKafka.close} disconnects. */
  consumer(config: ConsumerConfig): Consumer;
  /** Disconnects every client made here and deletes the topics made here. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * A Kafka client for one test file, on the brokers the global setup provides (or `brokers`, e.g.
 * the replicated cluster's). kafkajs logs only
 * errors, so test output stays readable; pass nothing else global (each test owns its names).
 */
export function createTestKafka(clientPrefix = 'tg-test', brokers = kafkaBrokers()): TestKafka {
  if (brokers.length === 0) throw new Error('no Kafka brokers provided: is test/global-setup.ts configured?');
  const kafka = new Kafka({
    clientId: uniqueName(clientPrefix),
    brokers,
    logLevel: logLevel.ERROR,
    retry: { retries: 5, initialRetryTime: 100 },
  });
  const clients: (Producer | Consumer)[] = [];
  const topics: string[] = [];
  let admin: Promise<Admin> | undefined;

  const getAdmin = (): Promise<Admin> => {
    admin ??= (async () => {
      const a = kafka.admin();
      await a.connect();
      return a;
    })();
    return admin;
  };

  return {
    kafka,
    brokers,
    admin: getAdmin,
    async uniqueTopic(prefix, partitions = 1) {
      const topic = uniqueName(prefix);
      const created = await (
        await getAdmin()
      ).createTopics({
        topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }],
        waitForLeaders: true,
      });
      if (!created) throw new Error(`topic ${topic} already existed`);
      topics.push(topic);
      return topic;
    },
    uniqueGroupId: (prefix) => uniqueName(`${prefix}_group`),
    producer(config) {
      const p = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, ...config });
      clients.push(p);
      return p;
    },
    consumer(config) {
      const c = kafka.consumer(config);
      clients.push(c);
      return c;
    },
    async close() {
      const all = clients.splice(0);
      await Promise.all(all.map((c) => c.disconnect()));
      if (admin) {
        const a = await admin;
        admin = undefined;
        const mine = topics.splice(0);
        // Deleting keeps a long-lived broker (TOOLGATE_KEEP_SERVERS=1) small; names never repeat.
        if (mine.length > 0) await a.deleteTopics({ topics: mine, timeout: 10_000 });
        await a.disconnect();
      }
    },
  };
}

/** One record as a test sees it. */
export interface ConsumedMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: IHeaders | undefined;
}

/**
 * Subscribes `consumer` to `topic` from the beginning, collects records until `count` arrived, then
 * stops the consumer and resolves with them in arrival order (per partition: offset order). Rejects
 * after `timeoutMs` naming how many arrived, so a lost message fails the test instead of hanging it.
 */
export async function consumeMessages(
  consumer: Consumer,
  topic: string,
  count: number,
  timeoutMs = 30_000,
): Promise<ConsumedMessage[]> {
  const got: ConsumedMessage[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`got ${got.length} of ${count} messages from ${topic} in ${timeoutMs} ms`)),
        timeoutMs,
      );
      consumer
        .run({
          eachMessage: ({ topic: t, partition, message }) => {
            got.push({
              topic: t,
              partition,
              offset: message.offset,
              key: message.key,
              value: message.value,
              headers: message.headers,
            });
            if (got.length >= count) resolve();
            return Promise.resolve();
          },
        })
        .catch(reject);
    });
  } finally {
    clearTimeout(timer);
    await consumer.stop();
  }
  return got;
}
