import type { BatchControl, BusMessage, MessageBatch } from '../ports/event-bus.js';
import { IndexHeap } from './index-heap.js';

/** Bounds and error reporting for {@link processBatchByKey}. */
export interface KeyedProcessorOptions {
  /**
   * How many messages of this batch run at once (≥ 1). The bound is per batch: a member handling
   * `partitionsConcurrently` partitions runs up to that many times this number.
   */
  readonly maxConcurrency: number;
  /**
   * Called when `handle` throws or rejects. The message still counts as finished and is marked
   * done: one bad message must not stall its partition, so `handle` is expected to
   * turn failures into results or dead letters itself, and this hook only reports what slipped
   * through. Exceptions thrown by the hook are swallowed.
   */
  readonly onError?: (error: unknown, message: BusMessage) => void;
}

/** What happened to a batch's messages; the three counts add up to the batch size. */
export interface KeyedBatchOutcome {
  /** Messages whose `handle` resolved. */
  readonly handled: number;
  /** Messages whose `handle` threw (reported through `onError`, marked done). */
  readonly failed: number;
  /** Messages never started because the batch turned stale; they will be delivered again. */
  readonly notStarted: number;
}

/**
 * Runs a batch with per-key ordering:
 * - messages with the same key run one at a time, in offset (= publish) order;
 * - messages with different keys run concurrently, at most `maxConcurrency` at once, the oldest
 *   ready message first;
 * - each message is marked done as soon as it finishes (so the committed offset follows the
 *   lowest unfinished one), followed by a heartbeat;
 * - once `control.isStale()` turns true no new message starts; running ones finish and are
 *   marked, and the call resolves — the rest is redelivered to whoever owns the partition next.
 *
 * Resolves when nothing is running any more; never rejects because of `handle`.
 */
export function processBatchByKey(
  batch: MessageBatch,
  control: BatchControl,
  handle: (message: BusMessage) => Promise<void>,
  options: KeyedProcessorOptions,
): Promise<KeyedBatchOutcome> {
  const { maxConcurrency } = options;
  if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) {
    throw new RangeError(`maxConcurrency must be a positive integer, got ${maxConcurrency}`);
  }
  const messages = batch.messages;
  // For each message, the index of the next message with the same key (-1: none).
  const nextOfSameKey = new Array<number>(messages.length).fill(-1);
  const lastIndexOfKey = new Map<string, number>();
  const ready = new IndexHeap();
  messages.forEach((message, i) => {
    const previous = lastIndexOfKey.get(message.key);
    if (previous === undefined) ready.push(i);
    else nextOfSameKey[previous] = i;
    lastIndexOfKey.set(message.key, i);
  });

  let running = 0;
  let handled = 0;
  let failed = 0;

  return new Promise((resolve) => {
    const finishIfIdle = (): void => {
      if (running === 0 && (ready.size === 0 || control.isStale())) {
        resolve({ handled, failed, notStarted: messages.length - handled - failed });
      }
    };

    const runOne = async (index: number): Promise<void> => {
      const message = messages[index]!;
      try {
        await handle(message);
        handled += 1;
      } catch (error) {
        failed += 1;
        try {
          options.onError?.(error, message);
        } catch {
          // A failing report must not stop the partition either.
        }
      }
      control.markDone(message.offset);
      void control.heartbeat();
      running -= 1;
      const next = nextOfSameKey[index]!;
      if (next >= 0) ready.push(next);
      pump();
    };

    const pump = (): void => {
      while (running < maxConcurrency && ready.size > 0 && !control.isStale()) {
        running += 1;
        void runOne(ready.pop()!);
      }
      finishIfIdle();
    };

    pump();
  });
}
