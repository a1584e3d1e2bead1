import type { Clock } from '../../libs/core/clock.js';

/**
 * Runs `fn` with a signal that aborts after `ms` on `clock`, for downstream reads made outside the
 * execute stage's timeout (an ownership lookup during authorization). The fake services honour the
 * signal; the rejection is a TimeoutError, which toolgate classifies as a timeout. The timer is
 * always cleaned up.
 */
export async function boundedCall<T>(
  clock: Clock,
  ms: number,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timer = new AbortController();
  clock.sleep(ms, timer.signal).then(
    () => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')),
    () => undefined,
  );
  try {
    return await fn(controller.signal);
  } finally {
    timer.abort();
  }
}
