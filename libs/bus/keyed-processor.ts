import type { BatchControl, BusMessage, MessageBatch } from '../ports/event-bus.js';
import { runByKey } from '../batch/run-by-key.js';

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
 * Runs a fetched batch of one partition with per-key ordering ({@link runByKey} keyed by the
 * message key, which carries the resource the message is about):
 * - messages with the same key run one at a time, in offset (= publish) order;
 * - messages with different keys run concurrently, at most `maxConcurrency` at once, the oldest
 *   ready message first;
 * - each message is marked done as soon as it finishes (so the committed offset follows the
 *   lowest unfinished one), followed by a heartbeat;
 * - once `control.isStale()` turns true no new message starts; running ones finish and are
 *   marked, and the call resolves — the rest is redelivered to whoever owns the partition next.
 *
 * What this adds to the scheduler is the bus's side of it: the offset marks, the heartbeat, the
 * partition's staleness as the stop switch, and a failed message counted as finished. It works on
 * one batch at a time; a subscriber that wants per-key order across batches and partitions uses
 * the keyed subscription (its lanes live beside this file) instead.
 *
 * Resolves when nothing is running any more; never rejects because of `handle`.
 */
export function processBatchByKey(
  batch: MessageBatch,
  control: BatchControl,
  handle: (message: BusMessage) => Promise<void>,
  options: KeyedProcessorOptions,
): Promise<KeyedBatchOutcome> {
  const messages = batch.messages;
  let failed = 0;
  return runByKey(messages, handle, {
    maxConcurrency: options.maxConcurrency,
    keyOf: (message) => message.key,
    stopped: () => control.isStale(),
    onSettled: (index, settlement) => {
      const message = messages[index]!;
      if (!settlement.ok) {
        failed += 1;
        try {
          options.onError?.(settlement.error, message);
        } catch {
          // A failing report must not stop the partition either.
        }
      }
      control.markDone(message.offset);
      void control.heartbeat();
    },
  }).then(({ started, notStarted }) => ({ handled: started - failed, failed, notStarted }));
}
