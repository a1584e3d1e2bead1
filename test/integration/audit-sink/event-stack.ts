import type { KafkaEventBus } from '../../../libs/bus/kafka/kafka-event-bus.js';
import type { EventKind, EventKinds } from '../../../libs/events/contracts.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { topicNames, type TopicNames } from '../../../libs/events/topics.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import type { GuardedExecutor } from '../../../services/executor/create-executor.js';
import { schemaRegistryUrl } from '../../helpers/env.js';
import { consumeMessages, createTestKafka, type TestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import {
  decodeRead,
  dropTestTopics,
  ensureTestTopics,
  testExecutor,
  testKafkaBus,
  testServiceEnv,
  type Read,
  type TestExecutorOptions,
} from '../executor/test-parts.js';

/** Partition counts of the test topics. */
export const PARTITIONS = { calls: 3, results: 3, audit: 2, dlq: 1 } as const;

/** Kafka topics under a fresh prefix, the schema registry codec for them, and a reader. */
export interface EventStack {
  readonly kafka: TestKafka;
  readonly bus: KafkaEventBus;
  readonly codec: RegistryEventCodec;
  readonly topics: TopicNames;
  readonly prefix: string;
  /** Encodes and publishes events of one kind, each with its key, in order. */
  publish<K extends EventKind>(
    kind: K,
    events: ReadonlyArray<{ key: string; event: EventKinds[K] }>,
  ): Promise<void>;
  /** Reads `count` messages of a topic from the beginning with a fresh group, decoded, with coordinates and headers. */
  read<K extends EventKind>(kind: K, count: number, timeoutMs?: number): Promise<Read<K>[]>;
  close(): Promise<void>;
}

/** Real Kafka with short group timings (joins and rebalances well under a second). */
export async function createEventStack(name: string): Promise<EventStack> {
  const kafka = createTestKafka(name);
  const prefix = uniqueName(name);
  const topics = topicNames(prefix);
  const bus = testKafkaBus(kafka, name);
  await ensureTestTopics(bus, topics, PARTITIONS);
  const codec = await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics });
  return {
    kafka,
    bus,
    codec,
    topics,
    prefix,
    async publish(kind, events) {
      const messages = await Promise.all(
        events.map(async ({ key, event }) => ({ key, value: await codec.encode(kind, event) })),
      );
      await bus.publish(topics[kind], messages);
    },
    async read(kind, count, timeoutMs = 30_000) {
      const consumer = kafka.consumer({
        groupId: kafka.uniqueGroupId(`${name}_${kind}`),
        maxWaitTimeInMs: 100,
      });
      const got = await consumeMessages(consumer, topics[kind], count, timeoutMs);
      return Promise.all(got.map((m) => decodeRead(codec, kind, m)));
    },
    async close() {
      await bus.close();
      await dropTestTopics(kafka, topics);
    },
  };
}

/**
 * The environment a service reads ({@link testServiceEnv}) pointed at `stack`: its brokers, topic
 * prefix and partition counts, and the Postgres schema `schema`.
 */
export function serviceEnvOn(stack: EventStack, schema: string): Record<string, string> {
  return testServiceEnv({
    brokers: stack.kafka.brokers,
    prefix: stack.prefix,
    schema,
    partitions: PARTITIONS,
  });
}

/**
 * How a consumer service on a stack is wired to Kafka: the stack's bus as both subscriber and
 * publisher, with the stack's codec and topic names (the first options of `createAuditSink` and
 * `createReconciler`).
 */
export function busWiring<Bus, Codec>(stack: {
  readonly bus: Bus;
  readonly codec: Codec;
  readonly topics: TopicNames;
}): { subscriber: Bus; publisher: Bus; codec: Codec; topics: TopicNames } {
  return { subscriber: stack.bus, publisher: stack.bus, codec: stack.codec, topics: stack.topics };
}

/**
 * An in-process executor on `stack` (`testExecutor`, so built by `createExecutor`): the stack's
 * bus, codec and topics, owner `<prefix>-executor` in group `<prefix>-executors`, silent; `options`
 * give the catalog, the stores, the principal keys and any other option.
 */
export function eventStackExecutor(
  stack: EventStack,
  options: Omit<
    TestExecutorOptions,
    'bus' | 'codec' | 'topics' | 'resultsPartitions' | 'ownerId' | 'groupId' | 'logger'
  >,
): GuardedExecutor {
  return testExecutor({
    bus: stack.bus,
    codec: stack.codec,
    topics: stack.topics,
    resultsPartitions: PARTITIONS.results,
    ownerId: `${stack.prefix}-executor`,
    groupId: `${stack.prefix}-executors`,
    logger: silentLogger,
    ...options,
  });
}

/** Polls until `probe` gives a value (not undefined/false); fails after `timeoutMs` naming `what`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
