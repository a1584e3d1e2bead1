import type { Consumer } from 'kafkajs';
import type { EventKind, EventKinds } from '../../libs/events/contracts.js';
import { decodeRead, type ExecutorStack } from '../integration/executor/executor-stack.js';

/**
 * Reads one output topic of a stack from the beginning for the whole scenario, decoding every
 * record, so a scenario can wait on "every call answered" and then count what each topic holds.
 * Records that do not decode are counted, never dropped silently.
 */
export interface TopicCollector<K extends EventKind> {
  readonly events: EventKinds[K][];
  readonly undecodable: number;
  /** Resolves once `predicate` holds over what arrived; rejects after `timeoutMs` with `what`. */
  until(predicate: () => boolean, timeoutMs: number, what: () => string): Promise<void>;
  stop(): Promise<void>;
}

/** What a collector needs of a stack: a client to consume with, the topic names and the codec. */
export type CollectorSource = {
  readonly kafka: Pick<ExecutorStack['kafka'], 'consumer' | 'uniqueGroupId'>;
} & Pick<ExecutorStack, 'topics' | 'codec'>;

export async function collectTopic<K extends EventKind>(
  stack: CollectorSource,
  kind: K,
): Promise<TopicCollector<K>> {
  const events: EventKinds[K][] = [];
  let undecodable = 0;
  const waiters = new Set<() => void>();
  const consumer: Consumer = stack.kafka.consumer({
    groupId: stack.kafka.uniqueGroupId(`chaos_${kind}`),
    maxWaitTimeInMs: 100,
  });
  const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
  await consumer.connect();
  await consumer.subscribe({ topic: stack.topics[kind], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message, partition }) => {
      try {
        const { event } = await decodeRead(stack.codec, kind, {
          topic: stack.topics[kind],
          partition,
          offset: message.offset,
          key: message.key,
          value: message.value,
          headers: message.headers,
        });
        events.push(event);
      } catch {
        undecodable += 1;
      }
      for (const w of waiters) w();
    },
  });
  await joined;
  return {
    events,
    get undecodable() {
      return undecodable;
    },
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
          reject(new Error(`timed out waiting for ${what()}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    stop: () => consumer.stop(),
  };
}
