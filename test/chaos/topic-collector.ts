import { Kafka, logLevel, type Consumer } from 'kafkajs';
import type { EventKind, EventKinds } from '../../libs/events/contracts.js';
import { uniqueName } from '../helpers/names.js';
import { decodeRead, type ExecutorStack } from '../integration/executor/executor-stack.js';

/**
 * Reads one output topic of a stack from the beginning for the whole scenario, decoding every
 * record, so a scenario can wait on "every call answered" and then count what each topic holds.
 * Records that do not decode are counted, never dropped silently.
 */
export interface TopicCollector<K extends EventKind> {
  /** Every record of the topic once, in arrival order (a record read twice is kept once). */
  readonly events: EventKinds[K][];
  /** Where each of `events` was read: `positions[i]` is the partition and offset of `events[i]`. */
  readonly positions: ReadonlyArray<{ readonly partition: number; readonly offset: number }>;
  readonly undecodable: number;
  /** Why kafkajs stopped a collector consumer for good (each was replaced by a new one). */
  readonly crashes: readonly string[];
  /** Resolves once `predicate` holds over what arrived; rejects after `timeoutMs` with `what`. */
  until(predicate: () => boolean, timeoutMs: number, what: () => string): Promise<void>;
  stop(): Promise<void>;
}

/** What a collector needs of a stack: a client to consume with, the topic names and the codec. */
export type CollectorSource = {
  readonly kafka: Pick<ExecutorStack['kafka'], 'consumer' | 'uniqueGroupId'>;
} & Pick<ExecutorStack, 'topics' | 'codec'>;

/** A reader of a scenario's own brokers: its client, and a collector source on it. */
export interface PrivateReader {
  /** Quiet, and retrying up to 30 times (200 ms doubling to 2 s): the brokers may be down a while. */
  readonly client: Kafka;
  /** `stack`'s topics and codec, consumed through `client` in groups named after `<name>`. */
  readonly source: CollectorSource;
}

/**
 * A Kafka client of its own (client id `<name>` made unique) on `brokers` — a private broker or
 * cluster of a scenario, not the stack's — and the collector source that reads `stack`'s topics
 * through it.
 */
export function privateReader(
  brokers: readonly string[],
  name: string,
  stack: Pick<ExecutorStack, 'topics' | 'codec'>,
): PrivateReader {
  const client = new Kafka({
    clientId: uniqueName(name),
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
    retry: { retries: 30, initialRetryTime: 200, maxRetryTime: 2_000 },
  });
  return {
    client,
    source: {
      kafka: { consumer: (c) => client.consumer(c), uniqueGroupId: (p) => uniqueName(`${p}_group`) },
      topics: stack.topics,
      codec: stack.codec,
    },
  };
}

/**
 * Starts a collector. Its consumer reads in a group of its own from the beginning; when kafkajs
 * stops it for good (a non-retriable crash, e.g. during a broker restart), a new one in a new group
 * reads the topic again and records already held are skipped by position, so a scenario's verdict
 * never rests on the health of its observer.
 */
export async function collectTopic<K extends EventKind>(
  stack: CollectorSource,
  kind: K,
): Promise<TopicCollector<K>> {
  const topic = stack.topics[kind];
  const events: EventKinds[K][] = [];
  const positions: Array<{ partition: number; offset: number }> = [];
  const seen = new Set<string>();
  const crashes: string[] = [];
  let undecodable = 0;
  let stopped = false;
  const waiters = new Set<() => void>();
  let consumer: Consumer;

  const startConsumer = async (): Promise<void> => {
    const current: Consumer = stack.kafka.consumer({
      groupId: stack.kafka.uniqueGroupId(`chaos_${kind}`),
      maxWaitTimeInMs: 100,
      // As the bus's consumers: kafkajs restarts a crashed consumer after its retrier's last wait
      // (up to 30 s by default), which would time what this collector sees, not what was published.
      retry: { maxRetryTime: 1_000 },
    });
    consumer = current;
    const joined = new Promise<void>((resolve) => current.on(current.events.GROUP_JOIN, () => resolve()));
    current.on(current.events.CRASH, ({ payload }) => {
      if (payload.restart || stopped || current !== consumer) return;
      crashes.push(`${payload.error.name}: ${payload.error.message}`);
      void replace();
    });
    await current.connect();
    await current.subscribe({ topic, fromBeginning: true });
    await current.run({
      eachMessage: async ({ message, partition }) => {
        const position = `${partition}:${message.offset}`;
        if (seen.has(position)) return;
        seen.add(position);
        try {
          const { event } = await decodeRead(stack.codec, kind, {
            topic,
            partition,
            offset: message.offset,
            key: message.key,
            value: message.value,
            headers: message.headers,
          });
          events.push(event);
          positions.push({ partition, offset: Number(message.offset) });
        } catch {
          undecodable += 1;
        }
        for (const w of waiters) w();
      },
    });
    await joined;
  };
  const replace = async (): Promise<void> => {
    await consumer.disconnect().catch(() => undefined);
    for (;;) {
      if (stopped) return;
      try {
        await startConsumer();
        return;
      } catch (error) {
        crashes.push(`restart failed: ${String(error)}`);
        await consumer.disconnect().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  };

  await startConsumer();
  return {
    events,
    positions,
    get undecodable() {
      return undecodable;
    },
    crashes,
    until(predicate, timeoutMs, what) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (predicate()) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const crashed = crashes.length === 0 ? '' : ` (collector consumer crashes: ${crashes.join('; ')})`;
          reject(new Error(`timed out waiting for ${what()}${crashed}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    stop: async () => {
      stopped = true;
      await consumer.stop();
    },
  };
}
