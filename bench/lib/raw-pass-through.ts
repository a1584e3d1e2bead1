/**
 * The raw baseline: a kafkajs consumer that forwards every input record to output topics, with
 * nothing in between — no decoding, no pipeline, no Redis. Producer and consumer settings are the
 * ones KafkaEventBus uses (idempotent producer, acks=all, one request in flight; 1 MiB per
 * partition fetches, several partitions at once), and offsets are committed only after the outputs
 * of a batch are acknowledged, as the executor does.
 */
import { Kafka, logLevel, Partitioners, type Consumer, type Message, type Producer } from 'kafkajs';
import { nowMs } from './report.js';

/**
 * - `one`: one output per input (to the results topic), one produce request per fetched batch;
 * - `two`: two outputs per input (results and audit), one produce request per fetched batch;
 * - `two-phased`: the executor's publish pattern without the executor: per input, the audit record
 *   is sent and acknowledged, then the result, each its own produce request, up to `inFlight`
 *   inputs of a batch at a time.
 */
export type PassThroughMode = 'one' | 'two' | 'two-phased';

export interface PassThroughOptions {
  readonly brokers: readonly string[];
  readonly groupId: string;
  readonly input: string;
  readonly results: string;
  readonly audit: string;
  readonly mode: PassThroughMode;
  readonly partitionsConcurrently: number;
  /** `two-phased` only: inputs of one batch forwarded at once. */
  readonly inFlight?: number;
  /** Send every result to this partition (a requester's reply partition) instead of by key. */
  readonly resultPartition?: number;
  /** Called once per forwarded input, after its outputs are acknowledged. */
  readonly onForwarded?: (value: Buffer) => void;
}

export interface PassThrough {
  /** Inputs whose outputs were acknowledged. */
  forwarded(): number;
  /** Epoch ms of the first fetched batch (NaN before) and of the latest acknowledged output. */
  firstBatchAtMs(): number;
  lastForwardedAtMs(): number;
  /** Resolves when `n` inputs have been forwarded. */
  untilForwarded(n: number): Promise<void>;
  stop(): Promise<void>;
}

/** A pass-through's counting, shared by every client's: what {@link PassThrough} reports. */
export interface ForwardProgress {
  /** A batch (or group) reached the consumer: the first one sets `firstBatchAtMs`. */
  readonly received: () => void;
  /** `count` inputs were forwarded (their outputs acknowledged) just now. */
  readonly forwardedNow: (count: number) => void;
  /** The pass-through broke: every wait for more forwarded inputs rejects with `error`. */
  readonly failed: (error: unknown) => void;
  /** The figures, for the pass-through to return with its `stop`. */
  readonly report: Omit<PassThrough, 'stop'>;
}

export function forwardProgress(): ForwardProgress {
  let forwarded = 0;
  let first = Number.NaN;
  let last = Number.NaN;
  let failure: Error | undefined;
  const waiters: Array<{ n: number; resolve: () => void; reject: (e: Error) => void }> = [];
  const settle = (): void => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i]!;
      if (failure !== undefined) waiters.splice(i, 1)[0]!.reject(failure);
      else if (forwarded >= w.n) waiters.splice(i, 1)[0]!.resolve();
    }
  };
  return {
    received: () => {
      if (Number.isNaN(first)) first = nowMs();
    },
    forwardedNow: (count) => {
      forwarded += count;
      last = nowMs();
      settle();
    },
    failed: (error) => {
      failure = error instanceof Error ? error : new Error(String(error));
      settle();
    },
    report: {
      forwarded: () => forwarded,
      firstBatchAtMs: () => first,
      lastForwardedAtMs: () => last,
      untilForwarded: (n) => {
        if (failure !== undefined) return Promise.reject(failure);
        if (forwarded >= n) return Promise.resolve();
        return new Promise((resolve, reject) => waiters.push({ n, resolve, reject }));
      },
    },
  };
}

export async function startPassThrough(o: PassThroughOptions): Promise<PassThrough> {
  const kafka = new Kafka({ clientId: o.groupId, brokers: [...o.brokers], logLevel: logLevel.ERROR });
  const producer: Producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  const consumer: Consumer = kafka.consumer({
    groupId: o.groupId,
    sessionTimeout: 30_000,
    rebalanceTimeout: 60_000,
    heartbeatInterval: 3_000,
    maxWaitTimeInMs: 1_000,
    maxBytesPerPartition: 1_048_576,
    allowAutoTopicCreation: false,
  });
  const progress = forwardProgress();
  const done = (values: readonly Buffer[]): void => {
    if (o.onForwarded) for (const v of values) o.onForwarded(v);
    progress.forwardedNow(values.length);
  };
  const result = (m: { key: Buffer | null; value: Buffer | null }): Message => ({
    key: m.key,
    value: m.value,
    ...(o.resultPartition === undefined ? {} : { partition: o.resultPartition }),
  });

  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topics: [o.input], fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: o.partitionsConcurrently,
    eachBatch: async (payload) => {
      const { batch } = payload;
      if (!payload.isRunning() || batch.messages.length === 0) return;
      progress.received();
      const messages = batch.messages;
      if (o.mode === 'two-phased') {
        let next = 0;
        const worker = async (): Promise<void> => {
          for (;;) {
            const m = messages[next++];
            if (m === undefined) return;
            await producer.send({ topic: o.audit, acks: -1, messages: [{ key: m.key, value: m.value }] });
            await producer.send({ topic: o.results, acks: -1, messages: [result(m)] });
            done([m.value!]);
          }
        };
        await Promise.all(Array.from({ length: Math.min(o.inFlight ?? 16, messages.length) }, worker));
      } else {
        const topicMessages = [{ topic: o.results, messages: messages.map(result) }];
        if (o.mode === 'two') {
          topicMessages.push({
            topic: o.audit,
            messages: messages.map((m) => ({ key: m.key, value: m.value })),
          });
        }
        await producer.sendBatch({ acks: -1, topicMessages });
        done(messages.map((m) => m.value!));
      }
      payload.resolveOffset(batch.lastOffset());
      await payload.commitOffsetsIfNecessary({
        topics: [
          {
            topic: batch.topic,
            partitions: [{ partition: batch.partition, offset: String(BigInt(batch.lastOffset()) + 1n) }],
          },
        ],
      });
      await payload.heartbeat();
    },
  });
  return {
    ...progress.report,
    async stop() {
      await consumer.disconnect().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
    },
  };
}
