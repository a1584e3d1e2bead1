import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { SubscribeOptions, Subscription, TopicPartition } from '../../ports/event-bus.js';
import type { BusLogger } from '../logger.js';
import { pause } from '../pause.js';
import { backoffCapMs, type Backoff } from '../../core/backoff.js';
import type { KafkaDelivery } from './kafka-delivery.js';
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
const REPLACEMENT_BACKOFF: Backoff = { baseDelayMs: 1_000, maxDelayMs: 30_000 };

/** One group generation as this member saw it. */
interface Generation {
  readonly abort: AbortController;
  /** Start floors of `fromBeginning: false` partitions; settles (never rejects) before batches run. */
  readonly floors: Promise<StartFloors>;
}

/** The membership part of the subscribe options: which group, topics and start. */
export type MembershipOptions = Pick<SubscribeOptions, 'groupId' | 'topics' | 'fromBeginning' | 'partitions'>;

/**
 * One consumer-group member on kafkajs, run with `eachBatch`, `eachBatchAutoResolve: false` and
 * `autoCommit: false` (the adapter owns commits). What happens to fetched batches is its
 * delivery's (batch or keyed, see KafkaDelivery); the subscription owns the membership:
 *
 * - When a heartbeat or commit answers that the group is rebalancing (or this member is gone), or
 *   the member joins a new generation, the generation's signal aborts and batches already fetched
 *   for it are handed back unprocessed (nothing resolved: they are fetched again by the
 *   partition's owner after the rebalance); the delivery is told at each step.
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
  private readonly delivery: KafkaDelivery;

  constructor(
    private readonly kafka: Kafka,
    private readonly admin: Admin,
    private readonly options: MembershipOptions,
    createDelivery: (consumer: () => Consumer) => KafkaDelivery,
    private readonly settings: KafkaConsumerSettings,
    private readonly logger: BusLogger,
    private readonly onGone: (subscription: KafkaSubscription) => void,
  ) {
    this.delivery = createDelivery(() => this.consumer);
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
      maxWaitTimeInMs: Math.min(settings.maxWaitTimeMs, this.delivery.maxWaitTimeMs ?? Infinity),
      maxBytesPerPartition: settings.maxBytesPerPartition,
      allowAutoTopicCreation: false,
      // kafkajs restarts a crashed consumer after its retrier's last wait, which doubles up to a
      // 30 s cap: a leader's death (fenced after ~9 s) then stopped consuming for up to 30 s more
      // (the chaos suite's Kafka leader failover: answers resumed 41 s after the kill instead of
      // ~10 s). Waits of at most 1 s bring it back within a second of the new leader.
      retry: { maxRetryTime: 1_000 },
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
    consumer.on(consumer.events.REBALANCING, () => {
      if (consumer === this.consumer) this.delivery.onRebalancing();
    });
    consumer.on(consumer.events.HEARTBEAT, () => {
      if (consumer === this.consumer) this.delivery.onAlive();
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (consumer !== this.consumer) return;
      this.generation.abort.abort();
      this.delivery.onRebalancing();
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
    const delayMs = backoffCapMs(REPLACEMENT_BACKOFF, this.replacements);
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
      partitionsConsumedConcurrently: this.delivery.partitionsConcurrently,
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
        // Nothing more is fetched (kafkajs would otherwise fetch the unresolved rest again and
        // again); running messages finish and commit while the consumer is still a member.
        this.consumer.pause(this.options.topics.map((topic) => ({ topic })));
      } catch {
        // Not running yet or any more: nothing is being fetched.
      }
      try {
        await this.delivery.stop();
      } catch (error) {
        this.logger.warn({ err: error, groupId: this.options.groupId }, 'delivery did not stop cleanly');
      }
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
    this.delivery.onAssignment(assignment);
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
    this.delivery.onRebalancing();
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
    const { topic, partition } = payload.batch;
    await this.delivery.handle(payload, {
      floor: floors.get(floorKey(topic, partition)),
      signal,
      heartbeat: () => this.heartbeat(payload),
      revoke: (reason) => this.revoke(reason),
    });
  }
}
