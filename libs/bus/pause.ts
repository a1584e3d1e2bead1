import { setTimeout as sleep } from 'node:timers/promises';

/** Waits `ms`, or less when `signal` aborts; never rejects. Timer-based pacing inside the adapters. */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return;
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    // Aborted: the caller re-checks its signal.
  }
}
