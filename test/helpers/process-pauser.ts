import { readFileSync } from 'node:fs';

/**
 * Freezes a process again and again: SIGSTOP, a random while, SIGCONT, a random while running, …
 * A stopped process keeps its sockets; what is sent to it waits in its socket buffers, and every
 * timer it had is overdue when it resumes — a machine so starved that a process gets no CPU at all
 * for seconds, on demand.
 *
 * Bounded: at most `stops` stops, and it ends by itself once `maxTotalMs` have passed since it
 * started (a stop is cut short to fit). Whatever happens — `stop()`, the bounds, a failed signal,
 * the test process exiting normally — it leaves the process running (SIGCONT). A process that is
 * gone ends the cycle (`gone`).
 */
export interface PauseOptions {
  /** The most stops; default unlimited (then `maxTotalMs` bounds it). */
  readonly stops?: number;
  /** Each stop lasts a random time in [minStopMs, maxStopMs]. */
  readonly minStopMs: number;
  readonly maxStopMs: number;
  /** Running time between stops (and before the first), random in [minRunMs, maxRunMs]. */
  readonly minRunMs: number;
  readonly maxRunMs: number;
  /** The cycle ends by itself this long after it started. */
  readonly maxTotalMs: number;
  /** Default Math.random. */
  readonly random?: () => number;
}

export interface PauseReport {
  readonly pid: number;
  /** Stops made, and how many of them /proc showed as stopped (state T) while they lasted. */
  readonly stops: number;
  readonly confirmedStopped: number;
  /** Wall time the process spent stopped, in total and the longest and shortest stop. */
  readonly stoppedMs: number;
  readonly longestStopMs: number;
  readonly shortestStopMs: number;
  /** From the start of the cycle to its end (or until now, while it runs). */
  readonly spanMs: number;
  /** True when the process went away during the cycle. */
  readonly gone: boolean;
  /** Each stop: when it began (ms after the cycle started) and how long it lasted. */
  readonly log: ReadonlyArray<{ readonly atMs: number; readonly ms: number }>;
}

export interface ProcessPauser {
  /** Resolves when the cycle ended (bounds reached, stopped, or the process gone). */
  readonly done: Promise<PauseReport>;
  /** True while the process is held stopped. */
  stopped(): boolean;
  report(): PauseReport;
  /** Ends the cycle now (a stop in progress is ended with SIGCONT) and resolves with the report. */
  stop(): Promise<PauseReport>;
}

/** Whether /proc says `pid` is stopped (state T, or t when traced). */
export function isStopped(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'T' || state === 't';
  } catch {
    return false;
  }
}

export function startPauser(pid: number, options: PauseOptions): ProcessPauser {
  const random = options.random ?? Math.random;
  const maxStops = options.stops ?? Infinity;
  const between = (lo: number, hi: number): number => lo + random() * Math.max(0, hi - lo);
  const startedAt = Date.now();
  const log: Array<{ atMs: number; ms: number }> = [];
  let confirmed = 0;
  let gone = false;
  let holding = false;
  let endedAt: number | undefined;
  const cancel = new AbortController();

  const signal = (sig: NodeJS.Signals): boolean => {
    try {
      process.kill(pid, sig);
      return true;
    } catch {
      gone = true;
      return false;
    }
  };
  // Never leave a stopped process behind, even when the test process exits mid-stop.
  const resumeOnExit = (): void => {
    if (holding) signal('SIGCONT');
  };
  process.once('exit', resumeOnExit);

  const report = (): PauseReport => {
    const lengths = log.map((s) => s.ms);
    return {
      pid,
      stops: log.length,
      confirmedStopped: confirmed,
      stoppedMs: lengths.reduce((a, b) => a + b, 0),
      longestStopMs: lengths.length === 0 ? 0 : Math.max(...lengths),
      shortestStopMs: lengths.length === 0 ? 0 : Math.min(...lengths),
      spanMs: (endedAt ?? Date.now()) - startedAt,
      gone,
      log,
    };
  };

  const done = (async (): Promise<PauseReport> => {
    try {
      while (log.length < maxStops && !cancel.signal.aborted) {
        const left = (): number => startedAt + options.maxTotalMs - Date.now();
        await wait(between(options.minRunMs, options.maxRunMs), cancel.signal);
        if (cancel.signal.aborted || left() <= 0) break;
        const planned = Math.min(between(options.minStopMs, options.maxStopMs), left());
        const at = Date.now();
        if (!signal('SIGSTOP')) break;
        holding = true;
        // The signal is delivered asynchronously; look shortly after.
        await wait(Math.min(50, planned), cancel.signal);
        if (isStopped(pid)) confirmed += 1;
        await wait(planned - (Date.now() - at), cancel.signal);
        holding = false;
        const resumed = signal('SIGCONT');
        log.push({ atMs: at - startedAt, ms: Date.now() - at });
        if (!resumed) break;
      }
    } finally {
      if (holding) {
        holding = false;
        signal('SIGCONT');
      }
      endedAt = Date.now();
      process.removeListener('exit', resumeOnExit);
    }
    return report();
  })();

  return {
    done,
    stopped: () => holding,
    report,
    async stop() {
      cancel.abort();
      return done;
    },
  };
}

/** Sleeps `ms` (≤ 0: not at all), or until `signal` aborts; never rejects. */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
