/**
 * A counting semaphore with a FIFO queue: at most `permits` holders at once, waiters served in the
 * order they asked. `acquire` resolves false (without a permit) when its signal aborts first.
 */
interface Waiter {
  readonly grant: () => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class Semaphore {
  #available: number;
  readonly #waiters: Waiter[] = [];

  constructor(permits: number) {
    if (!Number.isInteger(permits) || permits < 1)
      throw new RangeError(`permits must be an integer >= 1, got ${permits}`);
    this.#available = permits;
  }

  /** Resolves true once a permit is held (the caller must `release` it), or false if `signal` aborted first. */
  acquire(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    if (this.#available > 0 && this.#waiters.length === 0) {
      this.#available -= 1;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = { grant: () => resolve(true) };
      if (signal !== undefined) {
        waiter.signal = signal;
        waiter.onAbort = () => {
          const i = this.#waiters.indexOf(waiter);
          if (i >= 0) this.#waiters.splice(i, 1);
          resolve(false);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.#waiters.push(waiter);
    });
  }

  /** Returns a permit, handing it straight to the longest waiter if there is one. */
  release(): void {
    const next = this.#waiters.shift();
    if (next === undefined) {
      this.#available += 1;
      return;
    }
    if (next.onAbort !== undefined) next.signal?.removeEventListener('abort', next.onAbort);
    next.grant();
  }
}
