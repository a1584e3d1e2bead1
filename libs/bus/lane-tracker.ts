import type { ProgressTracker } from './batch-progress.js';

/**
 * The finished/unfinished bookkeeping of one partition's stream of delivered messages: offsets are
 * appended as they are fetched and finished in any order; the committable position is the lowest
 * unfinished offset, or just past the last appended one when all are finished. Offsets need not be
 * contiguous (Kafka skips compacted records and transaction markers). Finished entries below the
 * position are forgotten, so memory follows the unfinished window, not the stream.
 */
export class LaneTracker implements ProgressTracker {
  private offsets: string[] = [];
  private done: boolean[] = [];
  /** Index (in the arrays) of the first unfinished entry. */
  private head = 0;
  private readonly indexByOffset = new Map<string, number>();
  /** Index 0 of the arrays corresponds to this many entries dropped before it. */
  private dropped = 0;
  private last: bigint | undefined;
  private lastPrefix: string | undefined;
  private unfinished = 0;

  /** The highest offset appended so far, or undefined before the first. */
  highest(): bigint | undefined {
    return this.last;
  }

  /** Appends the next delivered offset; it must be greater than every earlier one (RangeError). */
  append(offset: string): void {
    const value = BigInt(offset);
    if (this.last !== undefined && value <= this.last) {
      throw new RangeError(`offsets must increase strictly: ${offset} after ${String(this.last)}`);
    }
    this.last = value;
    this.indexByOffset.set(offset, this.dropped + this.offsets.length);
    this.offsets.push(offset);
    this.done.push(false);
    this.unfinished += 1;
  }

  markDone(offset: string): boolean {
    const absolute = this.indexByOffset.get(offset);
    if (absolute === undefined) throw new RangeError(`offset ${offset} is not held by this lane`);
    const i = absolute - this.dropped;
    if (this.done[i]) return false;
    this.done[i] = true;
    this.unfinished -= 1;
    if (i !== this.head) return false;
    while (this.head < this.offsets.length && this.done[this.head]) {
      this.lastPrefix = this.offsets[this.head];
      this.indexByOffset.delete(this.lastPrefix!);
      this.head += 1;
    }
    this.compact();
    return true;
  }

  position(): string {
    const next = this.offsets[this.head];
    if (next !== undefined) return next;
    if (this.last === undefined) throw new RangeError('an empty lane has no position');
    return String(this.last + 1n);
  }

  lastFinishedInPrefix(): string | undefined {
    return this.lastPrefix;
  }

  /** How many appended messages are not finished yet. */
  unfinishedCount(): number {
    return this.unfinished;
  }

  private compact(): void {
    if (this.head < 1024 || this.head * 2 < this.offsets.length) return;
    this.offsets = this.offsets.slice(this.head);
    this.done = this.done.slice(this.head);
    this.dropped += this.head;
    this.head = 0;
  }
}
