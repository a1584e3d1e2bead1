import { setImmediate as yieldToLoop } from 'node:timers/promises';
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
 * One member of a memory consumer group: a read loop per owned partition, at most
 * `partitionsConcurrently` of them inside a handler at once, one batch per partition at a time.
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

  constructor(
    readonly memberId: string,
    options: SubscribeOptions,
    private readonly handler: BatchHandler,
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
    return Promise.all([...this.loops]).then(() => undefined);
  }

  assign(_generation: number, partitions: readonly AssignedPartition[]): void {
    if (this.state !== 'joining' && this.state !== 'active') return;
    this.generation = new AbortController();
    const signal = this.generation.signal;
    this.assigned = partitions.map(({ topic, partition }) => ({ topic, partition }));
    for (const partition of partitions) {
      const loop = this.readPartition(partition, signal);
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

  private async deliver(
    tp: TopicPartition,
    from: number,
    signal: AbortSignal,
  ): Promise<{ position: number; progressed: boolean }> {
    const { topic, partition } = tp;
    const records = this.topic(topic).partition(partition).read(from, this.settings.maxBatchSize);
    const messages: BusMessage[] = records.map((record, i) => ({
      topic,
      partition,
      offset: String(from + i),
      key: record.key,
      // Each delivery gets its own copy, as a network client would: handlers may mutate it.
      value: Buffer.from(record.value),
      headers: record.headers,
      timestampMs: record.timestampMs,
    }));
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
      await this.handler({ topic, partition, messages }, createBatchControl(progress, signal, heartbeat));
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
