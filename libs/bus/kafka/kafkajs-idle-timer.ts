import { createRequire } from 'node:module';

/** The part of kafkajs' per-connection request queue (kafkajs/src/network/requestQueue) this touches. */
interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs' interval between checks of a queue with requests waiting and no throttle (its constant). */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

let fixed = false;

/**
 * Stops kafkajs 2.2.4's idle timer loop. Its request queue re-arms a "check pending requests" timer
 * after every response and every check, even with nothing pending and no throttle: the delay is then
 * `throttledUntil - now`, negative, so Node fires it after 1 ms, and it re-arms itself for good —
 * about a thousand timer wake-ups a second per broker connection of an idle process (measured: an
 * idle executor at ~4 % of a core, every sample in that timer; see BENCHMARKS.md). The check only
 * ever sends pending requests, and a request that has to wait arms it again when it is queued, so
 * with nothing pending there is nothing to schedule: this replaces the method with one that
 * schedules only while requests are waiting (at the end of a client-side throttle, else after
 * kafkajs' own 10 ms). Idempotent; applied for the whole process, as the queue class is shared.
 */
export function fixKafkaJsIdleTimer(): void {
  if (fixed) return;
  fixed = true;
  const require = createRequire(import.meta.url);
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as {
    prototype: RequestQueueInternals;
  };
  RequestQueue.prototype.scheduleCheckPendingRequests = function (this: RequestQueueInternals): void {
    if (this.throttleCheckTimeoutId !== null || this.pending.length === 0) return;
    const throttledForMs = this.throttledUntil - Date.now();
    this.throttleCheckTimeoutId = setTimeout(
      () => {
        this.throttleCheckTimeoutId = null;
        this.checkPendingRequests();
      },
      throttledForMs > 0 ? throttledForMs : CHECK_PENDING_REQUESTS_INTERVAL_MS,
    );
  };
}
