/**
 * Time, passed in rather than read globally so tests can control it. `now` is epoch milliseconds.
 * `sleep` resolves after `ms` or rejects with the signal's reason when aborted.
 */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
