import { setMaxListeners } from 'node:events';
import type { ExecutionContext, NormalizedToolCall, ToolCallResult } from '../core/types.js';
import type { Clock } from '../core/clock.js';
import { runByKey } from './run-by-key.js';

/** One call of a batch, with its verified context. */
export interface BatchCall {
  readonly call: NormalizedToolCall;
  readonly ctx: ExecutionContext;
}

/**
 * What became of one call of a batch. Exactly one per input call, at the same position.
 *
 * - `completed`: `run` returned this result (whatever its outcome).
 * - `still-running`: the batch deadline passed while the call was running. Its signal was aborted;
 *   its outcome is unknown to the batch. The caller maps it — typically UNRESOLVED for a
 *   state-changing tool ("still executing, outcome unknown"), a retryable timeout for a read-only one.
 * - `not-started`: the deadline passed (or the batch was cancelled) before the call began, so it
 *   definitely did not run; safe to report as a retryable timeout.
 * - `crashed`: `run` threw, which a total runner (the guard pipeline) never does; kept per call so a
 *   defect in one call never hides another call's result.
 */
export type BatchItem =
  | { readonly status: 'completed'; readonly result: ToolCallResult }
  | { readonly status: 'still-running' }
  | { readonly status: 'not-started' }
  | { readonly status: 'crashed'; readonly error: unknown };

export interface RunBatchOptions {
  /** Most calls running at once across all conflict keys (at least 1). */
  readonly concurrency: number;
  /** Wall-clock budget for the whole batch, in ms from the call to `runBatch`. */
  readonly batchDeadlineMs: number;
  /**
   * The resource a call touches ("t1:inventory:SKU-7"). Calls with the same key run one at a time in
   * input order; calls with different keys (or none) run concurrently. A key function that throws
   * counts as no key for that call.
   */
  readonly conflictKey: (call: NormalizedToolCall, ctx: ExecutionContext) => string | undefined;
  readonly clock: Clock;
  /** Cancels the whole batch (shutdown); treated like the deadline passing now. */
  readonly signal?: AbortSignal;
}

/** Runs one call; must honour `signal` (aborted at the batch deadline). */
export type RunCall = (
  call: NormalizedToolCall,
  ctx: ExecutionContext,
  signal: AbortSignal,
) => Promise<ToolCallResult>;

/**
 * Runs the calls of one model turn: same-resource calls serialized in input order (no
 * lost update on one SKU), independent calls in parallel, at most `concurrency` at a time, all within
 * one batch deadline. The scheduling is {@link runByKey}'s, keyed by `conflictKey`.
 *
 * Returns one {@link BatchItem} per call, in input order, as soon as every call has finished or the
 * deadline has passed — whichever is first. Calls that finished keep their results whatever happened
 * to the others (a partial failure never hides a success). At the deadline, running calls are
 * aborted through their signal and reported `still-running` (their promises are left to settle on
 * their own; their late results are not reported, so each call still has exactly one answer), and
 * calls not yet begun are reported `not-started` and never begun.
 *
 * What this adds to the scheduler is the turn's side of it: one answer per call even when the
 * deadline cuts the batch short (the bus's `processBatchByKey` instead waits for every running
 * message, because a message's offset may only be committed once it finished).
 */
export async function runBatch(
  calls: readonly BatchCall[],
  run: RunCall,
  opts: RunBatchOptions,
): Promise<BatchItem[]> {
  if (calls.length === 0) return [];
  const items: (BatchItem | undefined)[] = new Array<BatchItem | undefined>(calls.length).fill(undefined);
  const started = new Array<boolean>(calls.length).fill(false);

  const stop = new AbortController();
  // Every running call listens on this one signal; a wide batch is not a leak.
  setMaxListeners(0, stop.signal);
  const onParentAbort = (): void => stop.abort(opts.signal?.reason);
  if (opts.signal?.aborted) stop.abort(opts.signal.reason);
  else opts.signal?.addEventListener('abort', onParentAbort, { once: true });

  const timer = new AbortController();
  const deadline = opts.clock.sleep(Math.max(0, opts.batchDeadlineMs), timer.signal).then(
    () => 'deadline' as const,
    () => 'cancelled-timer' as const,
  );
  const cancelled = new Promise<'cancelled'>((resolve) => {
    if (stop.signal.aborted) resolve('cancelled');
    else stop.signal.addEventListener('abort', () => resolve('cancelled'), { once: true });
  });
  const all = runByKey(
    calls,
    ({ call, ctx }, index) => {
      started[index] = true;
      return run(call, ctx, stop.signal);
    },
    {
      maxConcurrency: Math.max(1, Math.floor(opts.concurrency) || 1),
      keyOf: ({ call, ctx }) => opts.conflictKey(call, ctx),
      stopped: () => stop.signal.aborted,
      onSettled: (index, settlement) => {
        // A late settlement (after the deadline) lands here too, but the answer was taken already.
        items[index] = settlement.ok
          ? { status: 'completed', result: settlement.value }
          : { status: 'crashed', error: settlement.error };
      },
    },
  ).then(() => 'done' as const);

  const ended = await Promise.race([all, deadline, cancelled]);
  timer.abort();
  opts.signal?.removeEventListener('abort', onParentAbort);
  if (ended !== 'done' && !stop.signal.aborted) {
    stop.abort(new Error(`batch deadline of ${opts.batchDeadlineMs} ms passed`));
  }

  return items.map(
    (item, i): BatchItem => item ?? (started[i] ? { status: 'still-running' } : { status: 'not-started' }),
  );
}
