import { vi } from 'vitest';
import type { BusLogger } from '../../../libs/bus/logger.js';
import { MemoryEventBus } from '../../../libs/bus/memory/memory-event-bus.js';
import type {
  BatchControl,
  BatchHandler,
  BusMessage,
  EventBus,
  MessageBatch,
  OutgoingMessage,
} from '../../../libs/ports/event-bus.js';
import { kafkaClusterBrokers } from '../../helpers/env.js';
import { createTestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { testKafkaBus } from '../executor/test-parts.js';

/** One transport under test, with unique names and clean-up. */
export interface BusFixture {
  readonly bus: EventBus;
  /** Creates a fresh topic through the port's own `ensureTopics`. */
  topic(prefix: string, partitions: number): Promise<string>;
  group(prefix: string): string;
  /** Error-level log entries the adapter wrote. */
  readonly errors: Array<{ obj: object; msg: string | undefined }>;
  close(): Promise<void>;
}

export type BusFixtureFactory = () => Promise<BusFixture>;

/** How long a test waits for deliveries: Kafka needs group joins and rebalances. */
export const DELIVERY_TIMEOUT_MS = 30_000;

function capturingLogger(errors: BusFixture['errors']): BusLogger {
  const ignore = (): void => undefined;
  return { debug: ignore, info: ignore, warn: ignore, error: (obj, msg) => errors.push({ obj, msg }) };
}

export const memoryFixture: BusFixtureFactory = () => {
  const errors: BusFixture['errors'] = [];
  const bus = new MemoryEventBus({
    commitIntervalMs: 50,
    redeliveryDelayMs: 20,
    logger: capturingLogger(errors),
  });
  return Promise.resolve({
    bus,
    errors,
    async topic(prefix, partitions) {
      const topic = uniqueName(prefix);
      await bus.ensureTopics([{ topic, partitions }]);
      return topic;
    },
    group: (prefix) => uniqueName(`${prefix}_group`),
    close: () => bus.close(),
  });
};

/**
 * Real Kafka with timings shortened so joins and rebalances take well under a second: heartbeats
 * every 300 ms (revocation is noticed that fast), short idle fetches, the broker's minimum session.
 */
export const kafkaFixture: BusFixtureFactory = () => kafkaFixtureOn();

/**
 * The Kafka fixture on the replicated test cluster: three brokers, topics with replication factor
 * 3 and min.insync.replicas 2, so every acknowledged publish is on at least two of them.
 */
export const kafkaClusterFixture: BusFixtureFactory = () =>
  kafkaFixtureOn({
    brokers: kafkaClusterBrokers(),
    replicationFactor: 3,
    configs: { 'min.insync.replicas': '2' },
  });

function kafkaFixtureOn(
  cluster: {
    readonly brokers?: string[];
    readonly replicationFactor?: number;
    readonly configs?: Readonly<Record<string, string>>;
  } = {},
): Promise<BusFixture> {
  const errors: BusFixture['errors'] = [];
  const testKafka = createTestKafka('bus-contract', cluster.brokers);
  const bus = testKafkaBus(testKafka, 'bus-contract', { logger: capturingLogger(errors), logLevel: 'error' });
  const topics: string[] = [];
  return Promise.resolve({
    bus,
    errors,
    async topic(prefix, partitions) {
      const topic = uniqueName(prefix);
      await bus.ensureTopics([
        {
          topic,
          partitions,
          replicationFactor: cluster.replicationFactor ?? 1,
          ...(cluster.configs === undefined ? {} : { configs: cluster.configs }),
        },
      ]);
      topics.push(topic);
      return topic;
    },
    group: (prefix) => uniqueName(`${prefix}_group`),
    async close() {
      await bus.close();
      if (topics.length > 0) await (await testKafka.admin()).deleteTopics({ topics, timeout: 10_000 });
      await testKafka.close();
    },
  });
}

/** `count` messages: keys cycle through `keys`, values are "<seq>". */
export function numbered(
  count: number,
  keys: readonly string[],
  headers?: Record<string, string>,
): OutgoingMessage[] {
  return Array.from({ length: count }, (_, seq) => ({
    key: keys[seq % keys.length]!,
    value: Buffer.from(String(seq)),
    ...(headers ? { headers } : {}),
  }));
}

export const seqOf = (m: BusMessage): number => Number(m.value.toString());

/** Every delivery a member saw, in order. */
export class Received {
  readonly messages: BusMessage[] = [];

  offsets(): string[] {
    return this.messages.map((m) => m.offset);
  }

  seqs(): number[] {
    return this.messages.map(seqOf);
  }

  /** A handler that records each message and marks it done when `finish(m)` allows (default: all). */
  handler(finish: (m: BusMessage) => boolean = () => true): BatchHandler {
    return (batch: MessageBatch, control: BatchControl) => {
      for (const m of batch.messages) {
        this.messages.push(m);
        if (finish(m)) control.markDone(m.offset);
      }
      return Promise.resolve();
    };
  }

  /**
   * Each message once, in first-delivery order. At-least-once delivery may hand a message over again
   * (a group's first rebalance can do it); a redelivery repeats its partition and offset.
   */
  distinct(): BusMessage[] {
    const seen = new Set<string>();
    return this.messages.filter((m) => {
      const id = `${m.topic}/${m.partition}/${m.offset}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
  }

  async waitFor(count: number): Promise<void> {
    await vi.waitFor(
      () => {
        if (this.messages.length < count) throw new Error(`received ${this.messages.length} of ${count}`);
      },
      { timeout: DELIVERY_TIMEOUT_MS, interval: 20 },
    );
  }

  /** Waits until `count` distinct messages arrived, however often any was delivered. */
  async waitForDistinct(count: number): Promise<void> {
    await vi.waitFor(
      () => {
        const n = this.distinct().length;
        if (n < count) throw new Error(`received ${n} distinct of ${count}`);
      },
      { timeout: DELIVERY_TIMEOUT_MS, interval: 20 },
    );
  }
}

/** Polls `check` (which throws until satisfied) for up to the delivery timeout. */
export async function eventually(check: () => void | Promise<void>): Promise<void> {
  await vi.waitFor(check, { timeout: DELIVERY_TIMEOUT_MS, interval: 20 });
}

/** A promise with its resolver, for holding a handler at a known point. */
export function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}
