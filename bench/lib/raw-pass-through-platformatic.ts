/**
 * The raw baseline of lib/raw-pass-through.ts (`one` and `two` modes) on a second Kafka client,
 * `@platformatic/kafka`, to measure in the same run what the client alone costs: a consumer that
 * forwards every input record to the results topic (and, in `two` mode, to the audit topic) with
 * nothing in between. The producer is idempotent with acks=all; consumed records are forwarded in
 * groups, one produce request in flight, and each group's offsets are committed only after its
 * outputs are acknowledged. The client streams records one by one, so a group is what arrived while the
 * previous send was in flight (or within one event-loop turn when idle), at most 512 KiB of it.
 */
import { Consumer, Producer, ProduceAcks, type Message } from '@platformatic/kafka';
import { takeWithin } from '../../libs/bus/coalescing-publisher.js';
import { forwardProgress, type PassThrough } from './raw-pass-through.js';

/** Most input bytes one send forwards, as the executor's coalescing publisher bounds its sends. */
const MAX_GROUP_BYTES = 512 * 1024;

/** A record's key and value bytes: what it adds to a send. */
const recordBytes = (m: Message): number => (m.key?.length ?? 0) + (m.value?.length ?? 0);

export interface PlatformaticPassThroughOptions {
  readonly brokers: readonly string[];
  readonly groupId: string;
  readonly input: string;
  readonly results: string;
  readonly audit: string;
  readonly mode: 'one' | 'two';
  /** Send every result to this partition (a requester's reply partition) instead of by key. */
  readonly resultPartition?: number;
}

/** A producer with the bus's settings on this client: idempotent, acks=all, no topic creation. */
export function platformaticProducer(clientId: string, brokers: readonly string[]): Producer {
  return new Producer({
    clientId,
    bootstrapBrokers: [...brokers],
    idempotent: true,
    acks: ProduceAcks.ALL,
    autocreateTopics: false,
  });
}

export async function startPlatformaticPassThrough(o: PlatformaticPassThroughOptions): Promise<PassThrough> {
  const producer = platformaticProducer(`${o.groupId}-producer`, o.brokers);
  const consumer = new Consumer({
    clientId: `${o.groupId}-consumer`,
    groupId: o.groupId,
    bootstrapBrokers: [...o.brokers],
    sessionTimeout: 30_000,
    rebalanceTimeout: 60_000,
    heartbeatInterval: 3_000,
    maxWaitTime: 1_000,
    maxBytesPerPartition: 1_048_576,
    autocommit: false,
  });
  const progress = forwardProgress();
  /** Commits the offset after `m` (the client's per-message commit, in its callback form). */
  const commit = (m: Message): Promise<void> =>
    new Promise((resolve, reject) => {
      void m.commit((error) => (error === undefined || error === null ? resolve() : reject(error)));
    });

  const pending: Message[] = [];
  let sending = false;
  const flush = async (): Promise<void> => {
    try {
      while (pending.length > 0) {
        const group = takeWithin(pending, recordBytes, MAX_GROUP_BYTES);
        const messages = [];
        for (const m of group) {
          messages.push({ topic: o.results, key: m.key, value: m.value, partition: o.resultPartition });
        }
        if (o.mode === 'two')
          for (const m of group) messages.push({ topic: o.audit, key: m.key, value: m.value });
        await producer.send({ messages });
        const newest = new Map<number, Message>();
        for (const m of group) newest.set(m.partition, m);
        await Promise.all([...newest.values()].map(commit));
        progress.forwardedNow(group.length);
      }
    } catch (error) {
      progress.failed(error);
    } finally {
      sending = false;
    }
  };

  const stream = await consumer.consume({
    topics: [o.input],
    mode: 'committed',
    fallbackMode: 'earliest',
    autocommit: false,
  });
  stream.on('data', (m: Message) => {
    progress.received();
    pending.push(m);
    if (!sending) {
      sending = true;
      setImmediate(() => void flush());
    }
  });
  stream.on('error', progress.failed);
  return {
    ...progress.report,
    async stop() {
      await stream.close().catch(() => undefined);
      await consumer.close().catch(() => undefined);
      await producer.close().catch(() => undefined);
    },
  };
}
