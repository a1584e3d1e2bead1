/**
 * The finished/unfinished bookkeeping BatchProgress reads: OffsetTracker for a fixed batch,
 * LaneTracker for a partition's growing stream.
 */
export interface ProgressTracker {
  /** Records `offset` as finished; true when that moved the committable position. */
  markDone(offset: string): boolean;
  /** The next offset to read: the lowest unfinished one, or past the last known message. */
  position(): string;
  /** The last offset of the finished prefix, or undefined while the prefix is empty. */
  lastFinishedInPrefix(): string | undefined;
}

/** Where a batch's progress goes; each adapter supplies one per delivered batch. */
export interface ProgressSink {
  /**
   * The finished prefix grew. `position` is the next offset to read, `lastFinished` the offset of
   * the prefix's last message. Synchronous: it moves the adapter's local read position only.
   */
  advance(position: string, lastFinished: string): void;
  /** Durably records `position` as the group's committed offset. May reject (fenced, rebalancing). */
  commit(position: string): Promise<void>;
}

/** Tuning and error reporting for one batch's commits. */
export interface BatchProgressOptions {
  /** A commit is sent at most this long after the prefix first grew since the last commit. */
  readonly commitIntervalMs: number;
  /** A rejected commit is reported here and not retried: the next commit (or a redelivery) covers it. */
  readonly onCommitError: (error: unknown, position: string) => void;
}

/**
 * The commit policy both adapters share, so they behave alike: `markDone` feeds the tracker; when
 * the contiguous prefix grows, the read position moves at once and a commit is scheduled (at most
 * one per `commitIntervalMs`, throttled rather than debounced so a steady stream still commits);
 * `close` sends the final commit and waits for every commit in flight. Commits are sent one at a
 * time, in order, so a later position is never overwritten by an earlier one.
 */
export class BatchProgress {
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private committed: string;
  private chain: Promise<void> = Promise.resolve();
  private progressed = false;

  constructor(
    private readonly tracker: ProgressTracker,
    private readonly sink: ProgressSink,
    private readonly options: BatchProgressOptions,
  ) {
    // Before any message finishes, the position is where the batch started: nothing to commit.
    this.committed = tracker.position();
  }

  /** See BatchControl.markDone: RangeError for a foreign offset, no effect once closed. */
  markDone(offset: string): void {
    if (this.closed) return;
    if (!this.tracker.markDone(offset)) return;
    this.progressed = true;
    this.sink.advance(this.tracker.position(), this.tracker.lastFinishedInPrefix()!);
    if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.enqueueCommit();
      }, this.options.commitIntervalMs);
      this.timer.unref();
    }
  }

  /** Whether the committable position moved during this batch. */
  hasProgressed(): boolean {
    return this.progressed;
  }

  position(): string {
    return this.tracker.position();
  }

  /**
   * Sends a commit of the current position now unless it is already committed (e.g. after a commit
   * that failed during a rebalance, once the member belongs to the new generation).
   */
  flush(): void {
    if (this.closed) return;
    this.enqueueCommit();
  }

  /** Stops accepting marks, commits the final prefix and resolves when all commits have settled. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.enqueueCommit();
    await this.chain;
  }

  private enqueueCommit(): void {
    this.chain = this.chain.then(async () => {
      const position = this.tracker.position();
      if (position === this.committed) return;
      try {
        await this.sink.commit(position);
        this.committed = position;
      } catch (error) {
        this.options.onCommitError(error, position);
      }
    });
  }
}
