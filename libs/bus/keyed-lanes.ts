import { setMaxListeners } from 'node:events';
import type { BusMessage, MessageContext, MessageHandler, TopicPartition } from '../ports/event-bus.js';
import { BatchProgress } from './batch-progress.js';
import { IndexHeap } from '../batch/index-heap.js';
import { LaneTracker } from './lane-tracker.js';
import type { BusLogger } from './logger.js';

/** KeyedSubscribeOptions.maxBuffered when the subscriber does not say. */
export const DEFAULT_MAX_BUFFERED = 1000;

/** Where one partition's lane sends its commits and its backpressure; supplied by the adapter. */
export interface LaneSink {
  /** Durably records `position` (the next offset to read) as the group's committed offset. */
  commit(position: string): Promise<void>;
  /** Stop fetching this partition (`true`), or go on (`false`). Called on changes only. */
  throttle(paused: boolean): void;
}

/** Bounds and hooks of {@link KeyedLanes}. */
export interface KeyedLanesOptions {
  /** Messages running at once across all lanes (≥ 1). */
  readonly maxConcurrency: number;
  /** Unfinished messages one lane may hold before it asks its sink to stop fetching (≥ 1). */
  readonly maxBuffered: number;
  /** A commit goes out at most this long after a lane's finished prefix grew. */
  readonly commitIntervalMs: number;
  readonly groupId: string;
  readonly logger: BusLogger;
  /** Handed to every message's handler. */
  readonly heartbeat: () => Promise<void>;
  /**
   * Whether a message may start now (default: always). The Kafka adapter answers false while its
   * last heartbeat is too old; call {@link KeyedLanes.wake} when the answer may have changed.
   */
  readonly mayStart?: () => boolean;
}

/** One assignment's worth of a partition's stream: its offsets, commits and waiting messages. */
class LaneGeneration {
  readonly tracker = new LaneTracker();
  readonly progress: BatchProgress;
  /** Aborted when the partition is revoked or the lanes stop: every message's `signal`. */
  readonly abort = new AbortController();
  /** Not-started messages by sequence number. */
  readonly messages = new Map<number, BusMessage>();
  /** Per key, the sequence numbers of its not-started messages, in offset order. */
  readonly pending = new Map<string, number[]>();
  /** The head of every pending key whose key is not running: the oldest ready message first. */
  readonly ready = new IndexHeap();
  nextSeq = 0;
  running = 0;
  throttled = false;
  revoked = false;
  dropCommits = false;
  private closing: Promise<void> | undefined;

  constructor(
    readonly sink: LaneSink,
    first: string,
    options: KeyedLanesOptions,
    tp: TopicPartition,
  ) {
    this.finished = new Promise((resolve) => {
      this.markFinished = resolve;
    });
    // Every running message of the partition listens on it (and stops when it settles), so the
    // count is bounded by the concurrency, not a leak; the default cap of 10 would warn.
    setMaxListeners(0, this.abort.signal);
    this.tracker.append(first);
    this.progress = new BatchProgress(
      this.tracker,
      {
        advance: () => undefined,
        commit: (position) => (this.dropCommits ? Promise.resolve() : sink.commit(position)),
      },
      {
        commitIntervalMs: options.commitIntervalMs,
        onCommitError: (error, position) =>
          options.logger.warn(
            { err: error, groupId: options.groupId, topic: tp.topic, partition: tp.partition, position },
            'commit failed',
          ),
      },
    );
  }

  /** Settles once the generation is revoked, nothing of it runs, and its last commit is done. */
  readonly finished: Promise<void>;
  private markFinished!: () => void;

  /**
   * Commits the finished prefix a last time (unless commits are dropped); call once nothing runs.
   * Settles with {@link finished}.
   */
  close(): Promise<void> {
    this.closing ??= this.progress.close().then(() => this.markFinished());
    return this.closing;
  }
}

/** A partition's lane: the generation that receives its messages, and the keys running on it. */
class PartitionLane {
  current: LaneGeneration | undefined;
  /** Keys with a running message, of any generation: a key never runs twice at once. */
  readonly runningKeys = new Set<string>();
  /**
   * Revoked generations not finished yet (running messages or sending their last commit): the lane
   * stays known until they are, so stop and abandon reach them.
   */
  readonly draining = new Set<LaneGeneration>();

  constructor(readonly tp: TopicPartition) {}

  isIdle(): boolean {
    return this.current === undefined && this.draining.size === 0;
  }
}

/**
 * The per-partition lanes of one keyed subscription (see KeyedSubscriber in the event-bus port):
 * both adapters feed fetched messages in with {@link deliver} and report assignment changes; the
 * lanes run them with per-key order, a member-wide concurrency bound, commits of each lane's
 * lowest unfinished offset, and backpressure per lane.
 */
export class KeyedLanes {
  private readonly lanes = new Map<string, PartitionLane>();
  /** Lane keys in the order they are offered a free slot (round robin). */
  private turn: string[] = [];
  private cursor = 0;
  private running = 0;
  private held = false;
  private stopped = false;

  constructor(
    private readonly handler: MessageHandler,
    private readonly options: KeyedLanesOptions,
  ) {
    const { maxConcurrency, maxBuffered } = options;
    if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) {
      throw new RangeError(`maxConcurrency must be a positive integer, got ${maxConcurrency}`);
    }
    if (!Number.isInteger(maxBuffered) || maxBuffered < 1) {
      throw new RangeError(`maxBuffered must be a positive integer, got ${maxBuffered}`);
    }
  }

  /**
   * Takes fetched messages of one partition, in offset order. Messages at or below the highest
   * offset the partition's lane already holds are ignored (a re-fetch after a rebalance), and so
   * is everything once the lanes stopped. Never throws for a message it ignores.
   */
  deliver(tp: TopicPartition, messages: readonly BusMessage[], sink: LaneSink): void {
    if (this.stopped || messages.length === 0) return;
    const lane = this.laneOf(tp);
    for (const message of messages) {
      let generation = lane.current;
      if (generation === undefined) {
        generation = new LaneGeneration(sink, message.offset, this.options, tp);
        lane.current = generation;
      } else {
        const highest = generation.tracker.highest();
        if (highest !== undefined && BigInt(message.offset) <= highest) continue;
        generation.tracker.append(message.offset);
      }
      this.enqueue(lane, generation, message);
    }
    const generation = lane.current;
    if (
      generation !== undefined &&
      !generation.throttled &&
      generation.tracker.unfinishedCount() >= this.options.maxBuffered
    ) {
      generation.throttled = true;
      generation.sink.throttle(true);
    }
    this.pump();
  }

  /** A rebalance began: start nothing new until {@link assign}. Running messages go on. */
  hold(): void {
    this.held = true;
  }

  /**
   * The member's new assignment. Lanes of partitions in it go on where they were; the others are
   * revoked: their waiting messages are dropped, their running messages' signals abort, and their
   * commits are dropped (`commitRevoked: false`: another member may own them already) or sent once
   * the running messages finish (`true`). Resolves when every revoked lane has stopped running.
   */
  assign(assignment: readonly TopicPartition[], commitRevoked: boolean): Promise<void> {
    const kept = new Set(assignment.map(laneKey));
    const revoked: Promise<void>[] = [];
    for (const [key, lane] of this.lanes) {
      if (!kept.has(key)) revoked.push(this.revoke(lane, commitRevoked));
      // A commit refused while the group rebalanced is sent again in the new generation.
      else lane.current?.progress.flush();
    }
    this.held = false;
    this.pump();
    return Promise.all(revoked).then(() => undefined);
  }

  /**
   * Stops for good: nothing new starts, waiting messages are dropped, running messages' signals
   * abort; resolves once they have all returned and each lane's finished prefix is committed
   * (including the last commits of lanes revoked earlier that are still being sent).
   */
  stop(): Promise<void> {
    this.stopped = true;
    return Promise.all([...this.lanes.values()].map((lane) => this.revoke(lane, true))).then(() => undefined);
  }

  /** Like stop, without waiting and without committing: the member is gone (crashed). */
  abandon(): void {
    this.stopped = true;
    for (const lane of this.lanes.values()) {
      // Generations revoked earlier with their commits on may still be draining: they go silent too.
      for (const generation of lane.draining) generation.dropCommits = true;
      void this.revoke(lane, false);
    }
  }

  /** Re-checks whether messages may start (after `mayStart` may have changed). */
  wake(): void {
    this.pump();
  }

  /** Messages held unfinished by the partition's current lane (0 without one). For tests and metrics. */
  buffered(tp: TopicPartition): number {
    return this.lanes.get(laneKey(tp))?.current?.tracker.unfinishedCount() ?? 0;
  }

  /** Messages running now, across lanes. */
  runningCount(): number {
    return this.running;
  }

  private laneOf(tp: TopicPartition): PartitionLane {
    const key = laneKey(tp);
    let lane = this.lanes.get(key);
    if (lane === undefined) {
      lane = new PartitionLane({ topic: tp.topic, partition: tp.partition });
      this.lanes.set(key, lane);
      this.turn.push(key);
    }
    return lane;
  }

  private enqueue(lane: PartitionLane, generation: LaneGeneration, message: BusMessage): void {
    const seq = generation.nextSeq++;
    generation.messages.set(seq, message);
    const queue = generation.pending.get(message.key);
    if (queue !== undefined) {
      queue.push(seq);
      return;
    }
    generation.pending.set(message.key, [seq]);
    if (!lane.runningKeys.has(message.key)) generation.ready.push(seq);
  }

  /** Revokes the lane's current generation; settles when every revoked generation of it finished. */
  private revoke(lane: PartitionLane, commit: boolean): Promise<void> {
    const generation = lane.current;
    if (generation !== undefined) {
      lane.current = undefined;
      generation.revoked = true;
      generation.dropCommits = !commit;
      generation.abort.abort();
      generation.messages.clear();
      generation.pending.clear();
      while (generation.ready.size > 0) generation.ready.pop();
      if (generation.throttled) {
        generation.throttled = false;
        generation.sink.throttle(false);
      }
      lane.draining.add(generation);
      if (generation.running === 0) this.close(lane, generation);
    }
    const waits = [...lane.draining].map((g) => g.finished);
    return Promise.all(waits).then(() => undefined);
  }

  private forget(lane: PartitionLane): void {
    const key = laneKey(lane.tp);
    if (this.lanes.get(key) !== lane) return;
    this.lanes.delete(key);
    this.turn = this.turn.filter((k) => k !== key);
    if (this.cursor >= this.turn.length) this.cursor = 0;
  }

  private pump(): void {
    if (this.stopped || this.held) return;
    if (this.options.mayStart !== undefined && !this.options.mayStart()) return;
    while (this.running < this.options.maxConcurrency) {
      const lane = this.nextReadyLane();
      if (lane === undefined) return;
      this.start(lane, lane.current!);
    }
  }

  /** The next lane, in turn after the last one served, whose current generation has a ready message. */
  private nextReadyLane(): PartitionLane | undefined {
    const count = this.turn.length;
    for (let i = 0; i < count; i += 1) {
      const index = (this.cursor + i) % count;
      const lane = this.lanes.get(this.turn[index]!);
      if (lane?.current !== undefined && lane.current.ready.size > 0) {
        this.cursor = (index + 1) % count;
        return lane;
      }
    }
    return undefined;
  }

  private start(lane: PartitionLane, generation: LaneGeneration): void {
    const seq = generation.ready.pop()!;
    const message = generation.messages.get(seq)!;
    generation.messages.delete(seq);
    const queue = generation.pending.get(message.key)!;
    queue.shift();
    if (queue.length === 0) generation.pending.delete(message.key);
    lane.runningKeys.add(message.key);
    generation.running += 1;
    this.running += 1;
    const context: MessageContext = {
      signal: generation.abort.signal,
      heartbeat: this.options.heartbeat,
    };
    void this.run(message, context).then((finished) => this.settle(lane, generation, message, finished));
  }

  private async run(message: BusMessage, context: MessageContext): Promise<boolean> {
    try {
      return await this.handler(message, context);
    } catch (error) {
      this.options.logger.error(
        { err: error, groupId: this.options.groupId, partition: message.partition, offset: message.offset },
        'message handler threw; the message counts as finished',
      );
      return true;
    }
  }

  private settle(
    lane: PartitionLane,
    generation: LaneGeneration,
    message: BusMessage,
    finished: boolean,
  ): void {
    lane.runningKeys.delete(message.key);
    generation.running -= 1;
    this.running -= 1;
    if (finished) generation.progress.markDone(message.offset);
    const current = lane.current;
    if (current !== undefined) {
      const next = current.pending.get(message.key);
      if (next !== undefined) current.ready.push(next[0]!);
      if (current.throttled && current.tracker.unfinishedCount() < this.options.maxBuffered / 2) {
        current.throttled = false;
        current.sink.throttle(false);
      }
    }
    if (generation.revoked && generation.running === 0) this.close(lane, generation);
    this.pump();
  }

  /** Sends a revoked generation's last commit; once it is done, forgets the lane if nothing is left. */
  private close(lane: PartitionLane, generation: LaneGeneration): void {
    void generation.close().then(() => {
      lane.draining.delete(generation);
      if (lane.isIdle()) this.forget(lane);
    });
  }
}

function laneKey(tp: TopicPartition): string {
  return `${tp.topic}\u0000${tp.partition}`;
}
