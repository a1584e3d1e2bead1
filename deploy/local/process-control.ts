import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/** How to launch a long-running server in the background. */
export interface SpawnSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** stdout and stderr are appended here; the launcher does not hold the process's pipes. */
  readonly logFile: string;
}

/**
 * Starts `spec` detached in its own process group, so it outlives the launcher (an `npm run
 * kafka:up` returns while the server keeps running) and can be signalled as a group. Returns its pid.
 */
export function spawnDetached(spec: SpawnSpec): number {
  const out = openSync(spec.logFile, 'a');
  try {
    const child = spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      detached: true,
      stdio: ['ignore', out, out],
    });
    if (child.pid === undefined) throw new Error(`could not spawn ${spec.command}`);
    child.unref();
    return child.pid;
  } finally {
    closeSync(out);
  }
}

/** The pid recorded in `path`, or undefined when the file is missing or holds no number. */
export function readPidFile(path: string): number | undefined {
  if (!existsSync(path)) return undefined;
  const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** Records `pid` in `path` (overwrites). */
export function writePidFile(path: string, pid: number): void {
  writeFileSync(path, `${pid}\n`);
}

/** Removes the pid file if it still names `pid` (or unconditionally when `pid` is omitted). */
export function removePidFile(path: string, pid?: number): void {
  if (pid !== undefined && readPidFile(path) !== pid) return;
  rmSync(path, { force: true });
}

/** True while `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // A zombie still answers kill(0); field 3 of /proc/<pid>/stat is its state.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z';
  } catch {
    return false;
  }
}

/**
 * When `pid` started, in clock ticks since boot (/proc/<pid>/stat field 22), or undefined when it is
 * gone. With the pid it identifies a process across pid reuse.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; starttime is field 22 overall, 20th here.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** The argument vector of `pid` (Linux /proc), or undefined when it is gone. */
export function commandLine(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return undefined;
  }
}

/**
 * Pids of live processes with `marker` as one whole argument. The launchers put a unique
 * `-Dtoolgate.server=<name>-<port>` on each JVM, so this finds ours even when the pid file is lost,
 * and never mistakes a reused pid for one of ours.
 */
export function findProcessesByMarker(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    if (commandLine(pid)?.includes(marker) && isAlive(pid)) pids.push(pid);
  }
  return pids;
}

/** True when `pid` is alive and carries `marker`. */
export function isOurs(pid: number, marker: string): boolean {
  return isAlive(pid) && (commandLine(pid)?.includes(marker) ?? false);
}

/** How a stop ended. */
export type StopResult = 'terminated' | 'killed' | 'gone';

/**
 * Stops a process started by {@link spawnDetached}: SIGTERM to its group, waits up to `graceMs` for
 * a clean shutdown (Kafka flushes and closes its logs), then SIGKILL. Resolves once it is gone.
 */
export async function stopProcess(pid: number, graceMs = 20_000): Promise<StopResult> {
  if (!isAlive(pid)) return 'gone';
  signal(pid, 'SIGTERM');
  if (await waitUntilGone(pid, graceMs)) return 'terminated';
  signal(pid, 'SIGKILL');
  if (await waitUntilGone(pid, 10_000)) return 'killed';
  throw new Error(`process ${pid} survived SIGKILL`);
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // Not a group leader (e.g. adopted from a lost pid file): signal the process alone.
    try {
      process.kill(pid, sig);
    } catch {
      // Already gone.
    }
  }
}

async function waitUntilGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !isAlive(pid);
}
