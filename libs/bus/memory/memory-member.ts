import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type {
  BatchHandler,
  BusMessage,
  MessageHandler,
  SubscribeOptions,
  Subscription,
  TopicPartition,
} from '../../ports/event-bus.js';
import { createBatchControl } from '../batch-control.js';
import { BatchProgress } from '../batch-progress.js';
import { KeyedLanes, type LaneSink } from '../keyed-lanes.js';
import type { BusLogger } from '../logger.js';
import { OffsetTracker } from '../offset-tracker.js';
import { pause } from '../pause.js';
import type { AssignedPartition, GroupMember, MemoryGroup } from './memory-group.js';
import type { MemoryTopic } from './memory-log.js';
import { Slots } from './slots.js';

/** The bus-wide settings every member of the memory bus shares. */
export interface MemoryMemberSettings {
  readonly maxBatchSize: number;
  readonly commitIntervalMs: number;
  readonly redeliveryDelayMs: number;
  readonly logger: BusLogger;
}

/** A memory-bus subscription, plus a crash switch for tests. */
export interface MemorySubscription extends Subscription {
  /**
   * Simulates a member that died (its session expired): it leaves the group at once without
   * draining or committing, its partitions are reassigned immediately, and anything its running
   * handlers mark or commit afterwards is refused — so their messages are delivered again to the
   * new owner while the old handlers may still be running (exactly Kafka's zombie case).
   */
  crash(): void;
}

type State = 'joining' | 'active' | 'stopping' | 'stopped' | 'crashed';

/**
 * What the member does with what it reads: hand batches to a batch handler one at a time per
 * partition, or stream messages into keyed lanes (KeyedSubscriber semantics).
 */
export type MemoryDelivery =
  | { readonly kind: 'batch'; readonly handler: BatchHandler }
  | {
      readonly kind: 'keyed';
      readonly handler: MessageHandler;
      readonly maxConcurrency: number;
      readonly maxBuffered: number;
    };

/** A keyed member's per-partition fetch switch, flipped by its lane's backpressure. */
interface Throttle {
  paused: boolean;
  wake: (() => void) | undefined;
}

/**
 * One member of a memory consumer group: a read loop per owned partition. With batch delivery, at
 * most `partitionsConcurrently` of them inside a handler at once, one batch per partition at a
 * time; with keyed delivery, the loops feed keyed lanes and read on while messages run. Either way
 * a rebalance waits for running messages to finish and commit before partitions move.
 */
export class MemoryMember implements MemorySubscription, GroupMember {
  readonly topics: readonly string[];
  readonly fromBeginning: boolean;
  readonly partitions: readonly number[] | undefined;
  private readonly slots: Slots;
  /** Aborted when the current generation's partitions are revoked, and on stop or crash. */
  private generation = new AbortController();
  private readonly loops = new Set<Promise<void>>();
  private assigned: readonly TopicPartition[] = [];
  private state: State = 'joining';
  private stopping: Promise<void> | undefined;
  private readonly firstAssignment: Promise<void>;
  private resolveFirstAssignment!: () => void;
  private readonly lanes: KeyedLanes | undefined;
  private readonly throttles = new Map<string, Throttle>();

  constructor(
    readonly memberId: string,
    options: SubscribeOptions,
    private readonly delivery: MemoryDelivery,
    private readonly group: MemoryGroup,
    private readonly topic: (name: string) => MemoryTopic,
    private readonly settings: MemoryMemberSettings,
    private readonly onGone: (member: MemoryMember) => void,
  ) {
    this.topics = [...options.topics];
    this.fromBeginning = options.fromBeginning;
    this.partitions = options.partitions === undefined ? undefined : [...options.partitions];
    this.slots = new Slots(options.partitionsConcurrently ?? 1);
    this.firstAssignment = new Promise((resolve) => {
      this.resolveFirstAssignment = resolve;
    });
    this.lanes =
      delivery.kind === 'keyed'
        ? new KeyedLanes(delivery.handler, {
            maxConcurrency: delivery.maxConcurrency,
            maxBuffered: delivery.maxBuffered,
            commitIntervalMs: settings.commitIntervalMs,
            groupId: group.groupId,
            logger: settings.logger,
            heartbeat,
          })
        : undefined;
  }

  /** Resolves once the member has its first assignment (or was stopped before getting one). */
  joined(): Promise<void> {
    return this.firstAssignment;
  }

  assignment(): readonly TopicPartition[] {
    return this.assigned;
  }

  revoke(): Promise<void> {
    this.generation.abort();
    for (const throttle of this.throttles.values()) throttle.wake?.();
    // Keyed lanes drain and commit before the partitions move, like batches do.
    const drained = this.lanes?.assign([], true) ?? Promise.resolve();
    return Promise.all([...this.loops, drained]).then(() => undefined);
  }

  assign(_generation: number, partitions: readonly AssignedPartition[]): void {
    if (this.state !== 'joining' && this.state !== 'active') return;
    this.generation = new AbortController();
    const signal = this.generation.signal;
    this.assigned = partitions.map(({ topic, partition }) => ({ topic, partition }));
    for (const partition of partitions) {
      const loop = this.lanes
        ? this.streamPartition(this.lanes, partition, signal)
        : this.readPartition(partition, signal);
      this.loops.add(loop);
      void loop.finally(() => this.loops.delete(loop));
    }
    this.state = 'active';
    this.resolveFirstAssignment();
  }

  stop(): Promise<void> {
    this.stopping ??= this.drainAndLeave();
    return this.stopping;
  }

  crash(): void {
    if (this.state === 'stopped' || this.state === 'crashed') return;
    this.state = 'crashed';
    this.generation.abort();
    this.lanes?.abandon();
    this.group.remove(this.memberId);
    this.assigned = [];
    this.resolveFirstAssignment();
    this.onGone(this);
  }

  private async drainAndLeave(): Promise<void> {
    if (this.state === 'crashed') return;
    this.state = 'stopping';
    await this.revoke();
    this.group.remove(this.memberId);
    this.assigned = [];
    this.state = 'stopped';
    this.resolveFirstAssignment();
    this.onGone(this);
  }

  private async readPartition(tp: AssignedPartition, signal: AbortSignal): Promise<void> {
    const log = this.topic(tp.topic).partition(tp.partition);
    let position = tp.startOffset;
    while (!signal.aborted) {
      if (position >= log.end()) {
        await log.waitForAppend(signal);
        continue;
      }
      const release = await this.slots.acquire(signal);
      if (!release) break;
      let outcome: { position: number; progressed: boolean };
      try {
        // A handler that settles synchronously would otherwise keep this loop on the microtask
        // queue and starve timers and I/O.
        await yieldToLoop();
        if (signal.aborted) break;
        outcome = await this.deliver(tp, position, signal);
      } finally {
        release();
      }
      position = outcome.position;
      if (!outcome.progressed) await pause(this.settings.redeliveryDelayMs, signal);
    }
  }

  /** A keyed member's read loop: reads on while the lane runs, until its lane asks to pause. */
  private async streamPartition(
    lanes: KeyedLanes,
    tp: AssignedPartition,
    signal: AbortSignal,
  ): Promise<void> {
    const { topic, partition } = tp;
    const log = this.topic(topic).partition(partition);
    const throttle: Throttle = { paused: false, wake: undefined };
    this.throttles.set(`${topic}\u0000${partition}`, throttle);
    const sink: LaneSink = {
      commit: (position) =>
        this.group.commit(this.memberId, topic, partition, Number(position))
          ? Promise.resolve()
          : Promise.reject(new Error(`member ${this.memberId} no longer owns ${topic}/${partition}`)),
      throttle: (paused) => {
        throttle.paused = paused;
        if (!paused) throttle.wake?.();
      },
    };
    let position = tp.startOffset;
    while (!signal.aborted) {
      if (throttle.paused) {
        await new Promise<void>((resolve) => {
          throttle.wake = resolve;
          if (!throttle.paused || signal.aborted) resolve();
        });
        throttle.wake = undefined;
        continue;
      }
      if (position >= log.end()) {
        await log.waitForAppend(signal);
        continue;
      }
      // Handlers that settle synchronously must not keep this loop on the microtask queue.
      await yieldToLoop();
      if (signal.aborted) break;
      const messages = this.readMessages(tp, position);
      lanes.deliver(tp, messages, sink);
      position += messages.length;
    }
  }

  /** Up to maxBatchSize messages of the partition from `from`, each a fresh copy. */
  private readMessages(tp: TopicPartition, from: number): BusMessage[] {
    const { topic, partition } = tp;
    const records = this.topic(topic).partition(partition).read(from, this.settings.maxBatchSize);
    return records.map((record, i) => ({
      topic,
      partition,
      offset: String(from + i),
      key: record.key,
      // Each delivery gets its own copy, as a network client would: handlers may mutate it.
      value: Buffer.from(record.value),
      headers: record.headers,
      timestampMs: record.timestampMs,
    }));
  }

  private async deliver(
    tp: TopicPartition,
    from: number,
    signal: AbortSignal,
  ): Promise<{ position: number; progressed: boolean }> {
    const { topic, partition } = tp;
    const messages = this.readMessages(tp, from);
    const { logger } = this.settings;
    const progress = new BatchProgress(
      new OffsetTracker(messages.map((m) => m.offset)),
      {
        advance: () => undefined,
        commit: (position) =>
          this.group.commit(this.memberId, topic, partition, Number(position))
            ? Promise.resolve()
            : Promise.reject(new Error(`member ${this.memberId} no longer owns ${topic}/${partition}`)),
      },
      {
        commitIntervalMs: this.settings.commitIntervalMs,
        onCommitError: (error, position) =>
          logger.warn(
            { err: error, groupId: this.group.groupId, topic, partition, position },
            'commit refused',
          ),
      },
    );
    let failed = false;
    try {
      if (this.delivery.kind !== 'batch') throw new Error('a keyed member reads through its lanes');
      await this.delivery.handler(
        { topic, partition, messages },
        createBatchControl(progress, signal, heartbeat),
      );
    } catch (error) {
      failed = true;
      logger.error(
        { err: error, groupId: this.group.groupId, topic, partition, firstOffset: messages[0]?.offset },
        'batch handler rejected; unfinished messages will be delivered again',
      );
    }
    await progress.close();
    return { position: Number(progress.position()), progressed: progress.hasProgressed() && !failed };
  }
}

const heartbeat = (): Promise<void> => Promise.resolve();
