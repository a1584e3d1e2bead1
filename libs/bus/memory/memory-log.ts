/** One appended record; its offset is its index in the partition. */
export interface StoredRecord {
  readonly key: string;
  readonly value: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  readonly timestampMs: number;
}

/**
 * One partition of the memory bus: an append-only array. Everything is retained for the life of
 * the bus (the embedded mode runs demos and tests, not months of traffic), so "earliest" is
 * always offset 0.
 */
export class PartitionLog {
  private readonly records: StoredRecord[] = [];
  private waiters: Array<() => void> = [];

  /** The offset the next record will get. */
  end(): number {
    return this.records.length;
  }

  append(record: StoredRecord): number {
    this.records.push(record);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
    return this.records.length - 1;
  }

  /** Up to `max` records starting at `from`. */
  read(from: number, max: number): readonly StoredRecord[] {
    return this.records.slice(from, from + max);
  }

  /** Resolves after the next append, or when `signal` aborts. */
  waitForAppend(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve();
      };
      this.waiters.push(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** A topic: a fixed number of partition logs. */
export class MemoryTopic {
  readonly partitions: readonly PartitionLog[];

  constructor(
    readonly name: string,
    partitionCount: number,
  ) {
    this.partitions = Array.from({ length: partitionCount }, () => new PartitionLog());
  }

  partition(index: number): PartitionLog {
    const log = this.partitions[index];
    if (!log) throw new RangeError(`topic ${this.name} has no partition ${index}`);
    return log;
  }
}
