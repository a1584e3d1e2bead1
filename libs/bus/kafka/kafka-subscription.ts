import type { Admin, Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type {
  BatchHandler,
  BusMessage,
  SubscribeOptions,
  Subscription,
  TopicPartition,
} from '../../ports/event-bus.js';
import { createBatchControl } from '../batch-control.js';
import { BatchProgress } from '../batch-progress.js';
import type { BusLogger } from '../logger.js';
import { OffsetTracker } from '../offset-tracker.js';
import { pause } from '../pause.js';
import { backoffDelay, type BackoffPolicy } from '../../core/backoff.js';
import { isMembershipError } from './kafka-errors.js';
import { floorKey, pinLatestStarts, type StartFloors } from './start-positions.js';
import { staticPartitionAssigner } from './static-assigner.js';

/** Consumer tuning; see KafkaEventBusOptions for meanings and defaults. */
export interface KafkaConsumerSettings {
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly maxWaitTimeMs: number;
  readonly maxBytesPerPartition: number;
  readonly commitIntervalMs: number;
  readonly redeliveryDelayMs: number;
}

/** Waits before replacing a consumer that kafkajs stopped for good. */
const REPLACEMENT_BACKOFF: BackoffPolicy = { firstDelayMs: 1_000, maxDelayMs: 30_000 };

/** One group generation as this member saw it. */
interface Generation {
  readonly abort: AbortController;
  /** Start floors of `fromBeginning: false` partitions; settles (never rejects) before batches run. */
  readonly floors: Promise<StartFloors>;
}

/**
 * One consumer-group member on kafkajs, run with `eachBatch`, `eachBatchAutoResolve: false` and
 * `autoCommit: false`:
 *
 * - The adapter owns commits (BatchProgress): the read position moves with `resolveOffset` only
 *   over the finished prefix, and commits of exactly that prefix go out while the batch runs and
 *   once more before eachBatch returns. kafkajs' auto-commit would commit the same resolved
 *   offsets, but at moments the adapter does not see (inside its heartbeat, on errors), and a
 *   failed auto-commit surfaces as a consumer error instead of a logged, harmless redelivery.
 * - A timer heartbeats while a batch runs (kafkajs only heartbeats between batches), so a slow
 *   call does not cost the session; the executor bounds each call with its own timeout.
 * - When a heartbeat or commit answers that the group is rebalancing (or this member is gone), the
 *   generation's signal aborts: every running batch turns stale and batches already fetched are
 *   returned unprocessed. kafkajs rejoins only after every eachBatch of the fetch has returned
 *   (its fetcher awaits the worker queue before the runner calls joinAndSync), and the other
 *   members cannot get partitions before this member rejoins or `rebalanceTimeoutMs` passes. So
 *   a partition is never handled by two members as long as running messages finish within
 *   `rebalanceTimeoutMs`.
 * - kafkajs restarts its consumer after a retriable crash, but stops it for good after one it
 *   deems non-retriable; the adapter then replaces it with a new consumer in the same group (with
 *   backoff), so a member never lingers in the process consuming nothing.
 */
export class KafkaSubscription implements Subscription {
  private consumer: Consumer;
  private generation: Generation = { abort: new AbortController(), floors: Promise.resolve(new Map()) };
  private assigned: readonly TopicPartition[] = [];
  private stopping: Promise<void> | undefined;
  private readonly stopSignal = new AbortController();
  /** Consecutive replacements of a consumer that died for good; reset by the next group join. */
  private replacements = 0;

  constructor(
    private readonly kafka: Kafka,
    private readonly admin: Admin,
    private readonly options: SubscribeOptions,
    private readonly handler: BatchHandler,
    private readonly settings: KafkaConsumerSettings,
    private readonly logger: BusLogger,
    private readonly onGone: (subscription: KafkaSubscription) => void,
  ) {
    this.consumer = this.createConsumer();
  }

  /**
   * A kafkajs consumer for this member with its listeners. Events of a consumer this subscription
   * has replaced are ignored.
   */
  private createConsumer(): Consumer {
    const { options, settings } = this;
    const consumer = this.kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: settings.sessionTimeoutMs,
      rebalanceTimeout: settings.rebalanceTimeoutMs,
      heartbeatInterval: settings.heartbeatIntervalMs,
      maxWaitTimeInMs: settings.maxWaitTimeMs,
      maxBytesPerPartition: settings.maxBytesPerPartition,
      allowAutoTopicCreation: false,
      ...(options.partitions === undefined
        ? {}
        : { partitionAssigners: [staticPartitionAssigner(options.partitions)] }),
    });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      if (consumer !== this.consumer) return;
      this.replacements = 0;
      this.onJoin(
        Object.entries(payload.memberAssignment).flatMap(([topic, partitions]) =>
          partitions.map((partition) => ({ topic, partition })),
        ),
      );
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (consumer !== this.consumer) return;
      this.generation.abort.abort();
      this.logger.error(
        { err: payload.error, groupId: options.groupId, restart: payload.restart },
        'kafka consumer crashed',
      );
      if (payload.restart) return;
      // kafkajs gives up on a consumer whose error it deems non-retriable: without a new one this
      // member would stay in the process, consuming nothing, for good.
      this.assigned = [];
      this.replaceConsumer();
    });
    return consumer;
  }

  /**
   * Replaces a consumer that kafkajs stopped for good with a new one in the same group, after a
   * backoff (1 s doubling to 30 s across consecutive failures). The old consumer's offsets were
   * only ever committed over finished prefixes, so the new one resumes without loss; whatever the
   * old one had running is delivered again. Does nothing once the subscription is stopping.
   */
  private replaceConsumer(): void {
    this.replacements += 1;
    const delayMs = backoffDelay(REPLACEMENT_BACKOFF, this.replacements);
    this.logger.error(
      { groupId: this.options.groupId, delayMs, replacement: this.replacements },
      'kafka consumer stopped for good; replacing it',
    );
    void (async () => {
      await pause(delayMs, this.stopSignal.signal);
      if (this.stopping) return;
      await this.consumer.disconnect().catch(() => undefined);
      if (this.stopping) return;
      this.consumer = this.createConsumer();
      try {
        await this.run();
        // A stop that came while the new consumer was starting may have missed it.
        if (this.stopping) await this.consumer.disconnect().catch(() => undefined);
      } catch (error) {
        if (this.stopping) return;
        this.logger.error(
          { err: error, groupId: this.options.groupId },
          'replacement consumer did not start',
        );
        this.replaceConsumer();
      }
    })();
  }

  /** Connects, joins and waits for the first assignment's start positions. */
  async start(): Promise<void> {
    await this.run();
  }

  private async run(): Promise<void> {
    await this.consumer.connect();
    // kafkajs' own reset is always "earliest": for latest-groups the adapter pins the start itself.
    await this.consumer.subscribe({ topics: [...this.options.topics], fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.options.partitionsConcurrently ?? 1,
      eachBatch: (payload) => this.eachBatch(payload),
    });
    await this.generation.floors;
  }

  assignment(): readonly TopicPartition[] {
    return this.assigned;
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopSignal.abort();
      this.generation.abort.abort();
      try {
        // disconnect = stop (waits for running eachBatch calls, leaves the group) + close sockets.
        await this.consumer.disconnect();
      } catch (error) {
        this.logger.warn(
          { err: error, groupId: this.options.groupId },
          'kafka consumer did not stop cleanly',
        );
      }
      this.assigned = [];
      this.onGone(this);
    })();
    return this.stopping;
  }

  private onJoin(assignment: readonly TopicPartition[]): void {
    this.generation.abort.abort();
    this.assigned = assignment;
    const floors = this.options.fromBeginning
      ? Promise.resolve<StartFloors>(new Map())
      : pinLatestStarts(this.admin, this.options.groupId, assignment, (offsets) =>
          this.consumer.commitOffsets(offsets).catch((error: unknown) => {
            this.logger.warn(
              { err: error, groupId: this.options.groupId },
              'could not commit start positions',
            );
          }),
        ).catch((error: unknown) => {
          // Without floors the member starts at kafkajs' earliest: more delivered, nothing lost.
          this.logger.error({ err: error, groupId: this.options.groupId }, 'could not pin start positions');
          return new Map<string, bigint>();
        });
    this.generation = { abort: new AbortController(), floors };
  }

  private revoke(reason: unknown): void {
    if (this.generation.abort.signal.aborted) return;
    this.logger.info({ groupId: this.options.groupId, reason: String(reason) }, 'partitions revoked');
    this.generation.abort.abort();
  }

  private async heartbeat(payload: EachBatchPayload): Promise<void> {
    try {
      await payload.heartbeat();
    } catch (error) {
      if (isMembershipError(error)) this.revoke(error);
      else this.logger.debug({ err: error, groupId: this.options.groupId }, 'heartbeat failed');
    }
  }

  /**
   * Returns a batch unprocessed after a revocation. kafkajs keeps fetching until its own next
   * heartbeat reports the rebalance; a short pause keeps that from becoming a busy loop.
   */
  private async handBack(): Promise<void> {
    await pause(Math.min(100, this.settings.heartbeatIntervalMs), this.stopSignal.signal);
  }

  private async eachBatch(payload: EachBatchPayload): Promise<void> {
    const generation = this.generation;
    const signal = generation.abort.signal;
    // Batches fetched before a revocation are handed back untouched: nothing is resolved, so
    // they are fetched again by whoever owns the partition after the rebalance.
    if (this.stopping || !payload.isRunning() || payload.isStale()) return;
    if (signal.aborted) return this.handBack();
    const floors = await generation.floors;
    if (signal.aborted) return this.handBack();

    const { batch } = payload;
    const { topic, partition } = batch;
    const floor = floors.get(floorKey(topic, partition));
    const tracker = new OffsetTracker(
      batch.messages.map((m) => m.offset),
      String(BigInt(batch.lastOffset()) + 1n),
    );
    const progress = new BatchProgress(
      tracker,
      {
        advance: (_position, lastFinished) => payload.resolveOffset(lastFinished),
        commit: (position) =>
          payload.commitOffsetsIfNecessary({
            topics: [{ topic, partitions: [{ partition, offset: position }] }],
          }),
      },
      {
        commitIntervalMs: this.settings.commitIntervalMs,
        onCommitError: (error, position) => {
          if (isMembershipError(error)) this.revoke(error);
          this.logger.warn(
            { err: error, groupId: this.options.groupId, topic, partition, position },
            'commit failed',
          );
        },
      },
    );
    const deliver: BusMessage[] = [];
    for (const message of batch.messages) {
      if (floor !== undefined && BigInt(message.offset) < floor) progress.markDone(message.offset);
      else deliver.push(toBusMessage(topic, partition, message));
    }

    const timer = setInterval(() => void this.heartbeat(payload), this.settings.heartbeatIntervalMs);
    let failed = false;
    try {
      if (deliver.length > 0) {
        const control = createBatchControl(progress, signal, () => this.heartbeat(payload));
        await this.handler({ topic, partition, messages: deliver }, control);
      }
    } catch (error) {
      failed = true;
      this.logger.error(
        { err: error, groupId: this.options.groupId, topic, partition, firstOffset: deliver[0]?.offset },
        'batch handler rejected; unfinished messages will be delivered again',
      );
    } finally {
      clearInterval(timer);
    }
    await progress.close();
    if ((failed || !progress.hasProgressed()) && !tracker.isComplete()) {
      await pause(this.settings.redeliveryDelayMs, signal);
    }
  }
}

function toBusMessage(topic: string, partition: number, message: KafkaMessage): BusMessage {
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries(message.headers ?? {})) {
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (value !== undefined) headers[name] = Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
  }
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key === null ? '' : message.key.toString('utf8'),
    value: message.value ?? Buffer.alloc(0),
    headers,
    timestampMs: Number(message.timestamp),
  };
}
