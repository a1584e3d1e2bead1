import type { Clock } from './clock.js';

interface Sleeper {
  readonly dueMs: number;
  readonly seq: number;
  readonly resolve: () => void;
  readonly detach: () => void;
}

/**
 * A {@link Clock} that only moves when told to, for tests and the in-memory adapters.
 *
 * Contract:
 * - `now()` starts at `startMs` and changes only through {@link ManualClock.advance}.
 * - `sleep(ms)` with `ms <= 0` (or NaN) resolves without waiting for `advance`; otherwise it resolves
 *   when an `advance` reaches `now() + ms`. It rejects with `signal.reason` if the signal aborts
 *   first (immediately if already aborted), and an aborted sleeper is forgotten.
 * - `advance` wakes due sleepers one at a time in order of due time (ties: order of `sleep` calls),
 *   setting `now()` to each sleeper's due time before waking it and letting the woken code run
 *   (pending promise callbacks drain) before the next one, so a loop that sleeps again inside the
 *   advanced window is woken again within the same `advance`.
 */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly sleepers: Sleeper[] = [];

  constructor(startMs = 0) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  /** Sleepers not yet woken or aborted. */
  get pendingSleepers(): number {
    return this.sleepers.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- port: reject with the reason
        reject(signal.reason);
        return;
      }
      if (!(ms > 0)) {
        resolve();
        return;
      }
      const onAbort = (): void => {
        this.remove(sleeper);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- port: reject with the reason
        reject(signal?.reason);
      };
      const sleeper: Sleeper = {
        dueMs: this.current + ms,
        seq: this.seq++,
        resolve,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      this.sleepers.push(sleeper);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Moves time forward by `ms` (must be a non-negative finite number), waking every sleeper that
   * falls due on the way, in order. Resolves once the clock stands at the target time and the woken
   * code has run up to its next real wait.
   */
  async advance(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance(ms) needs a finite ms >= 0, got ${ms}`);
    const target = this.current + ms;
    for (;;) {
      const next = this.nextDue(target);
      if (next === undefined) break;
      this.remove(next);
      this.current = next.dueMs;
      next.detach();
      next.resolve();
      await drainCallbacks();
    }
    this.current = target;
    await drainCallbacks();
  }

  private nextDue(target: number): Sleeper | undefined {
    let best: Sleeper | undefined;
    for (const s of this.sleepers) {
      if (s.dueMs > target) continue;
      if (best === undefined || s.dueMs < best.dueMs || (s.dueMs === best.dueMs && s.seq < best.seq))
        best = s;
    }
    return best;
  }

  private remove(sleeper: Sleeper): void {
    const i = this.sleepers.indexOf(sleeper);
    if (i >= 0) this.sleepers.splice(i, 1);
  }
}

/** Node empties the whole promise-callback queue before running the next macrotask. */
function drainCallbacks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
