import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { delimiter, join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Busy-loop processes on every core, so a test can run its system starved of CPU: timers fire
 * late, requests wait in socket buffers, a process gets a slice now and then. Started and stopped
 * by the test; the hog never outlives it:
 *
 * - `stress-ng --cpu N` (Debian's package) when it is on PATH together with util-linux `setpriv`:
 *   started through `setpriv --pdeathsig KILL`, so it is killed when the test process dies however
 *   it dies, and stress-ng's workers die with it (each sets its own parent-death signal);
 * - otherwise N node children running `for(;;)`, each of which checks every few milliseconds
 *   whether its parent is still the test process and exits when it is not.
 *
 * Either way each hog ends by itself after `lifetimeMs`, and `stop()` (or the test process's
 * normal exit) kills it. While it runs, the load average and the test process's own timer lag are
 * sampled: the reading says how starved the machine really was.
 */
export type HogEngine = 'stress-ng' | 'node';

export interface CpuHogOptions {
  /** Busy processes; default 2 × `os.availableParallelism()`. */
  readonly workers?: number;
  /** `auto` (default): stress-ng when it and setpriv are on PATH, else node children. */
  readonly engine?: 'auto' | HogEngine;
  /** The longest a hog runs if nobody stops it; default 10 minutes. */
  readonly lifetimeMs?: number;
  /** How often /proc/loadavg is read; default 1 s. */
  readonly sampleEveryMs?: number;
}

/** What the machine looked like while the hog ran. */
export interface LoadReading {
  readonly engine: HogEngine;
  readonly workers: number;
  readonly cores: number;
  readonly ranMs: number;
  /** 1-minute load average when the hog started, its highest sample, and when it stopped. */
  readonly load1Before: number;
  readonly load1Max: number;
  readonly load1End: number;
  /** Runnable tasks (/proc/loadavg's fourth field), highest and mean of the samples. */
  readonly runnableMax: number;
  readonly runnableMean: number;
  /** Share of all CPU time the hog processes got while they ran (0–1); undefined if unreadable. */
  readonly hogCpuShare: number | undefined;
  /** How late this process's timers fired (event-loop delay), ms. */
  readonly timerLagMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly samples: number;
}

export interface CpuHog {
  readonly engine: HogEngine;
  readonly workers: number;
  /** The hog's own processes (the stress-ng parent, or every node child). */
  readonly pids: readonly number[];
  /** The reading so far. */
  reading(): LoadReading;
  /** Kills the hog and waits for it to be gone; resolves with the final reading. Idempotent. */
  stop(): Promise<LoadReading>;
}

/** The program `name` if it is an executable file on PATH. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * An argv prefix that makes a child die (SIGKILL) when the process that spawned it dies:
 * `setpriv --pdeathsig KILL`, which execs the command in place (the pid stays the command's).
 * Empty when setpriv is not on PATH.
 */
export function dieWithParent(): readonly string[] {
  return process.platform === 'linux' && onPath('setpriv') !== undefined
    ? ['setpriv', '--pdeathsig', 'KILL']
    : [];
}

/** Busy loop; exits when its parent is no longer the test process, or after its lifetime. */
const NODE_HOG = `
const parent = Number(process.argv[1]);
const endAt = Date.now() + Number(process.argv[2]);
let x = 1;
for (let i = 1; ; i++) {
  x = (x * 1103515245 + 12345) | 0;
  if ((i & 0x3ffff) === 0 && (process.ppid !== parent || Date.now() > endAt)) process.exit(x & 0);
}`;

export async function startCpuHog(options: CpuHogOptions = {}): Promise<CpuHog> {
  const cores = availableParallelism();
  const workers = options.workers ?? 2 * cores;
  const lifetimeMs = options.lifetimeMs ?? 600_000;
  const wanted = options.engine ?? 'auto';
  const stressNg = onPath('stress-ng');
  const launcher = dieWithParent();
  const engine: HogEngine =
    wanted === 'auto' ? (stressNg !== undefined && launcher.length > 0 ? 'stress-ng' : 'node') : wanted;
  if (engine === 'stress-ng' && stressNg === undefined) throw new Error('stress-ng is not on PATH');

  const cpuBefore = machineJiffies();
  const load1Before = loadavg()?.load1 ?? 0;
  const children: ChildProcess[] = [];
  if (engine === 'stress-ng') {
    const argv = [
      ...launcher,
      'stress-ng',
      '--cpu',
      String(workers),
      '--timeout',
      `${Math.ceil(lifetimeMs / 1000)}s`,
      '--quiet',
    ];
    children.push(spawn(argv[0]!, argv.slice(1), { stdio: 'ignore' }));
  } else {
    for (let i = 0; i < workers; i++) {
      children.push(
        spawn(process.execPath, ['-e', NODE_HOG, String(process.pid), String(lifetimeMs)], {
          stdio: 'ignore',
        }),
      );
    }
  }
  const exited = children.map(
    (c) =>
      new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : c.once('exit', () => resolve()))),
  );
  const killAll = (): void => {
    for (const pid of hogPids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  // Every pid of the hog: its children and, for stress-ng, their workers.
  const hogPids = (): number[] => {
    const own = children.map((c) => c.pid).filter((p): p is number => p !== undefined);
    return engine === 'stress-ng' ? [...own, ...own.flatMap(childPids)] : own;
  };
  process.once('exit', killAll);

  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const startedAt = Date.now();
  const samples: Array<{ load1: number; runnable: number }> = [];
  const sample = (): void => {
    const l = loadavg();
    if (l !== undefined) samples.push(l);
  };
  const timer = setInterval(sample, options.sampleEveryMs ?? 1_000);
  timer.unref();
  // CPU time of the hog's processes, read before they are killed.
  let hogJiffies: number | undefined;
  let cpuAfter: number | undefined;
  let endedAt: number | undefined;
  let final: LoadReading | undefined;

  const reading = (): LoadReading => {
    const ms = (endedAt ?? Date.now()) - startedAt;
    const load1 = samples.map((s) => s.load1);
    const runnable = samples.map((s) => s.runnable);
    const share =
      hogJiffies === undefined || cpuBefore === undefined || cpuAfter === undefined || cpuAfter <= cpuBefore
        ? undefined
        : Math.min(1, hogJiffies / (cpuAfter - cpuBefore));
    return {
      engine,
      workers,
      cores,
      ranMs: ms,
      load1Before,
      load1Max: Math.max(load1Before, ...load1),
      load1End: load1.at(-1) ?? load1Before,
      runnableMax: runnable.length === 0 ? 0 : Math.max(...runnable),
      runnableMean: runnable.length === 0 ? 0 : round1(runnable.reduce((a, b) => a + b, 0) / runnable.length),
      hogCpuShare: share === undefined ? undefined : round2(share),
      timerLagMs: {
        p50: round1(lag.percentile(50) / 1e6),
        p99: round1(lag.percentile(99) / 1e6),
        max: round1(lag.max / 1e6),
      },
      samples: samples.length,
    };
  };

  // Give the children a moment to exist (and stress-ng to fork its workers) before anyone reads them.
  await new Promise((r) => setTimeout(r, 300));
  sample();
  return {
    engine,
    workers,
    pids: children.map((c) => c.pid!),
    reading,
    async stop() {
      if (final !== undefined) return final;
      clearInterval(timer);
      sample();
      hogJiffies = hogPids().reduce((sum, pid) => sum + (processJiffies(pid) ?? 0), 0);
      cpuAfter = machineJiffies();
      endedAt = Date.now();
      killAll();
      await Promise.all(exited);
      process.removeListener('exit', killAll);
      final = reading();
      lag.disable();
      return final;
    },
  };
}

function loadavg(): { load1: number; runnable: number } | undefined {
  try {
    const [l1, , , tasks] = readFileSync('/proc/loadavg', 'utf8').trim().split(/\s+/);
    return { load1: Number(l1), runnable: Number(tasks!.split('/')[0]) };
  } catch {
    return undefined;
  }
}

/** All CPU time of the machine so far (every core, every state), in clock ticks. */
function machineJiffies(): number | undefined {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1);
    return cpu.slice(0, 8).reduce((sum, v) => sum + Number(v), 0);
  } catch {
    return undefined;
  }
}

/** User + system CPU time of one process, in clock ticks. */
function processJiffies(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at state, field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((s) => s !== '')
      .map(Number);
  } catch {
    return [];
  }
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
