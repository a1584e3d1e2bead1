import { IndexHeap } from './index-heap.js';

/** How one started item of {@link runByKey} ended. */
export type KeyedSettlement<R> =
  { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown };

/** Bounds and hooks of {@link runByKey}. */
export interface RunByKeyOptions<T, R> {
  /** Most items running at once, across all keys (a positive integer; RangeError otherwise). */
  readonly maxConcurrency: number;
  /**
   * The key of an item: items with the same key run one at a time, in input order; items with
   * different keys run concurrently. `undefined` (or a key function that throws) means no key: the
   * item waits for nothing but a free slot.
   */
  readonly keyOf: (item: T, index: number) => string | undefined;
  /**
   * Asked before every start: once it answers true, nothing new starts. It is a one-way switch
   * (an answer that turns back to false is not noticed until some running item settles).
   */
  readonly stopped?: () => boolean;
  /**
   * Called once per started item when its `run` settled, before the next item of the same key may
   * start — so whatever it records (a finished offset, a result) happens in key order. An
   * exception it throws is swallowed: the scheduler's bookkeeping must go on.
   */
  readonly onSettled?: (index: number, settlement: KeyedSettlement<R>) => void;
}

/** How far a {@link runByKey} got; the two counts add up to the number of items. */
export interface KeyedRunOutcome {
  /** Items whose `run` was called (each settled before the promise resolved). */
  readonly started: number;
  /** Items never started because `stopped` turned true first. */
  readonly notStarted: number;
}

/**
 * Runs a fixed list of keyed items with per-key order and bounded concurrency — the one scheduler
 * behind a model turn's calls (`runBatch`) and a fetched batch of bus messages
 * (`processBatchByKey`):
 * - items with the same key run one at a time, in input order (no lost update on one resource);
 * - items with different keys, or none, run concurrently, at most `maxConcurrency` at once;
 * - a free slot goes to the oldest ready item (the lowest index whose key is not running), so
 *   early items finish early and as many distinct keys start as the bound allows;
 * - `onSettled` sees each item as it settles; a `run` that throws (synchronously or not) is
 *   reported there as `{ ok: false }` and never stops the others;
 * - once `stopped()` answers true no new item starts; running ones are let finish.
 *
 * The first items start synchronously, inside this call. Resolves once nothing runs and nothing
 * more may start; never rejects because of `run` or `onSettled`. Throws RangeError (synchronously)
 * for a bad `maxConcurrency`.
 */
export function runByKey<T, R>(
  items: readonly T[],
  run: (item: T, index: number) => Promise<R>,
  options: RunByKeyOptions<T, R>,
): Promise<KeyedRunOutcome> {
  const { maxConcurrency, stopped = () => false, onSettled } = options;
  if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) {
    throw new RangeError(`maxConcurrency must be a positive integer, got ${maxConcurrency}`);
  }
  // For each item, the index of the next item with the same key (-1: none).
  const nextOfSameKey = new Array<number>(items.length).fill(-1);
  const lastIndexOfKey = new Map<string, number>();
  const ready = new IndexHeap();
  items.forEach((item, index) => {
    const key = keyOrNone(options.keyOf, item, index);
    const previous = key === undefined ? undefined : lastIndexOfKey.get(key);
    if (previous === undefined) ready.push(index);
    else nextOfSameKey[previous] = index;
    if (key !== undefined) lastIndexOfKey.set(key, index);
  });

  let running = 0;
  let started = 0;

  return new Promise((resolve) => {
    const finishIfIdle = (): void => {
      if (running === 0 && (ready.size === 0 || stopped())) {
        resolve({ started, notStarted: items.length - started });
      }
    };

    const runOne = async (index: number): Promise<void> => {
      let settlement: KeyedSettlement<R>;
      try {
        settlement = { ok: true, value: await run(items[index]!, index) };
      } catch (error) {
        settlement = { ok: false, error };
      }
      try {
        onSettled?.(index, settlement);
      } catch {
        // A failing report must not stop the items behind this one.
      }
      running -= 1;
      const next = nextOfSameKey[index]!;
      if (next >= 0) ready.push(next);
      pump();
    };

    const pump = (): void => {
      while (running < maxConcurrency && ready.size > 0 && !stopped()) {
        running += 1;
        started += 1;
        void runOne(ready.pop()!);
      }
      finishIfIdle();
    };

    pump();
  });
}

function keyOrNone<T>(
  keyOf: RunByKeyOptions<T, unknown>['keyOf'],
  item: T,
  index: number,
): string | undefined {
  try {
    return keyOf(item, index);
  } catch {
    return undefined;
  }
}
