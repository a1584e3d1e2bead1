import type { Clock } from './clock.js';

/**
 * The real clock: `now()` is `Date.now()`; `sleep(ms, signal)` resolves after about `ms` (negative
 * or NaN count as 0) using a timer, or rejects with `signal.reason` as soon as the signal aborts
 * (immediately if it already has). The timer and the abort listener are always cleaned up, so a
 * long-lived signal shared by many sleeps does not accumulate listeners.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- port: reject with the reason
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- port: reject with the reason
        reject(signal?.reason);
      };
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Number.isFinite(ms) && ms > 0 ? ms : 0,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};
