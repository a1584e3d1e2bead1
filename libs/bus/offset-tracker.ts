/**
 * Which messages of one batch are finished, and how far the group may commit. Messages finish in
 * any order (different keys run concurrently); the committable position is the lowest unfinished
 * offset, so a crash redelivers every unfinished message and nothing below it.
 *
 * Offsets need not be contiguous (Kafka skips compacted records and transaction markers): the
 * prefix is over the batch's messages in order, and once all are finished the position is the
 * batch's end offset (by default the last offset + 1).
 */
export class OffsetTracker {
  private readonly offsets: readonly string[];
  private readonly indexByOffset = new Map<string, number>();
  private readonly done: boolean[];
  private readonly end: string;
  /** Index of the first unfinished message; `offsets.length` once all are finished. */
  private next = 0;
  private finished = 0;

  /**
   * @param offsets the batch's offsets, strictly increasing decimal strings
   * @param endOffset where the partition continues after this batch (default: last offset + 1);
   *   must be greater than the last offset. Required for an empty batch.
   */
  constructor(offsets: readonly string[], endOffset?: string) {
    let previous: bigint | undefined;
    offsets.forEach((offset, i) => {
      const value = parseOffset(offset);
      if (previous !== undefined && value <= previous) {
        throw new RangeError(`offsets must increase strictly: ${offset} after ${String(previous)}`);
      }
      previous = value;
      this.indexByOffset.set(offset, i);
    });
    const last = previous;
    if (endOffset === undefined) {
      if (last === undefined) throw new RangeError('an empty batch needs an explicit end offset');
      this.end = String(last + 1n);
    } else {
      if (last !== undefined && parseOffset(endOffset) <= last) {
        throw new RangeError(`end offset ${endOffset} must be greater than the last offset ${String(last)}`);
      }
      this.end = endOffset;
    }
    this.offsets = offsets;
    this.done = offsets.map(() => false);
  }

  /**
   * Records `offset` as finished. Returns true when that moved the committable position. Finishing
   * an offset twice is harmless (returns false). Throws RangeError for an offset not in the batch.
   */
  markDone(offset: string): boolean {
    const i = this.indexByOffset.get(offset);
    if (i === undefined) throw new RangeError(`offset ${offset} is not part of this batch`);
    if (this.done[i]) return false;
    this.done[i] = true;
    this.finished += 1;
    if (i !== this.next) return false;
    while (this.next < this.offsets.length && this.done[this.next]) this.next += 1;
    return true;
  }

  isDone(offset: string): boolean {
    const i = this.indexByOffset.get(offset);
    return i !== undefined && this.done[i] === true;
  }

  /** The next offset the partition should be read from: the lowest unfinished one, or the end. */
  position(): string {
    return this.offsets[this.next] ?? this.end;
  }

  /** The lowest unfinished offset, or undefined when every message is finished. */
  lowestUnfinished(): string | undefined {
    return this.offsets[this.next];
  }

  /** The offset of the last message in the finished prefix, or undefined when the prefix is empty. */
  lastFinishedInPrefix(): string | undefined {
    return this.next === 0 ? undefined : this.offsets[this.next - 1];
  }

  isComplete(): boolean {
    return this.next === this.offsets.length;
  }

  /** How many messages are finished, inside the prefix or not. */
  finishedCount(): number {
    return this.finished;
  }

  size(): number {
    return this.offsets.length;
  }
}

function parseOffset(offset: string): bigint {
  if (!/^\d+$/.test(offset)) throw new RangeError(`not an offset: ${JSON.stringify(offset)}`);
  return BigInt(offset);
}
