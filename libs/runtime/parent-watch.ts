import type { Clock } from '../core/clock.js';

/**
 * Whether the process was started by npm (`npx toolgate …`, `npm exec`, `npm run …`): npm runs a
 * bin through `sh -c`, and on SIGTERM or SIGINT it forwards the signal to that shell only. The
 * shell dies of it without passing it on, so the service would be left running without a parent:
 * the one sign it gets is that its parent process changed.
 */
// eslint-disable-next-line no-restricted-properties -- npm's mark of how the process started, not a setting
export function launchedByNpm(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.npm_command !== undefined && env.npm_command !== '';
}

/** What {@link watchParent} needs: the parent's pid as the OS reports it now, and a clock. */
export interface ParentWatchOptions {
  /** Default: `() => process.ppid`. */
  readonly parentPid?: () => number;
  readonly clock: Clock;
  /** How often the parent pid is read. Default 1,000 ms (one system call a second). */
  readonly intervalMs?: number;
}

/**
 * Calls `onGone` once, within `intervalMs`, after the process's parent went away (the pid read
 * first is no longer the parent: the process was re-parented). Returns a function that ends the
 * watch; call it when the process stops for another reason, so no timer is left behind.
 */
export function watchParent(onGone: () => void, options: ParentWatchOptions): () => void {
  const parentPid = options.parentPid ?? (() => process.ppid);
  const intervalMs = options.intervalMs ?? 1_000;
  const first = parentPid();
  const stop = new AbortController();
  void (async () => {
    try {
      while (!stop.signal.aborted) {
        await options.clock.sleep(intervalMs, stop.signal);
        if (parentPid() !== first) {
          stop.abort();
          onGone();
        }
      }
    } catch {
      // The watch was ended: nothing to do.
    }
  })();
  return () => stop.abort();
}
