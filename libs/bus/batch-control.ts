import type { BatchControl } from '../ports/event-bus.js';
import type { BatchProgress } from './batch-progress.js';

/**
 * The BatchControl both adapters hand to a handler: progress goes to `progress`, staleness is
 * `signal` (aborted on revocation or stop), and `heartbeat` is the adapter's (which must not
 * reject).
 */
export function createBatchControl(
  progress: BatchProgress,
  signal: AbortSignal,
  heartbeat: () => Promise<void>,
): BatchControl {
  return {
    markDone: (offset) => progress.markDone(offset),
    heartbeat,
    isStale: () => signal.aborted,
    signal,
  };
}
