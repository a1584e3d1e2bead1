import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import type { LauncherLog } from './log.js';
import type { SpawnSpec } from './process-control.js';
import {
  findProcessesByMarker,
  isAlive,
  isOurs,
  readPidFile,
  removePidFile,
  spawnDetached,
  stopProcess,
  writePidFile,
} from './process-control.js';
import { isPortOpen, waitFor } from './wait-for.js';

/** A background server the launchers own: how to recognise it, probe it and launch it. */
export interface ManagedServer {
  /** For messages: "kafka", "schema registry". */
  readonly name: string;
  /** A whole argument on the server's command line that marks it as ours (and which instance). */
  readonly marker: string;
  readonly runDir: string;
  readonly pidFile: string;
  /** Where the server's own output goes (the spawn log); its tail is shown when a start fails. */
  readonly logFile: string;
  /** What clients connect to, for messages ("127.0.0.1:19092"). */
  readonly address: string;
  readonly host: string;
  /** Ports that must be free before a launch. */
  readonly ports: readonly number[];
  /** The environment variables that move those ports, for the error message. */
  readonly portVariables: readonly string[];
  /** True when the server answers a real request (not merely accepts a connection). */
  answers(): Promise<boolean>;
  /** Fetches what is missing, writes configuration, and returns the command to run. */
  prepare(log: LauncherLog): Promise<SpawnSpec>;
  /** Runs once after a fresh start answered (e.g. to create internal state); counted in readyMs. */
  warmUp?(): Promise<void>;
}

/** What {@link bringUp} did. */
export interface UpResult {
  readonly pid: number;
  /** False when an instance of ours was already running and answering (a no-op). */
  readonly started: boolean;
  /** Milliseconds from spawn to first answer (0 when already running). */
  readonly readyMs: number;
  /** Milliseconds spent preparing (fetching, formatting) before the spawn. */
  readonly prepareMs: number;
}

/**
 * Ensures one instance of `server` runs and answers. Idempotent: an instance of ours that answers
 * is reused; a stale pid file (dead or foreign pid) is discarded. Refuses to start when a port is
 * taken by something that is not ours. On a failed start the spawned process is stopped and the
 * error carries the tail of its log.
 */
export async function bringUp(server: ManagedServer, timeoutMs: number, log: LauncherLog): Promise<UpResult> {
  mkdirSync(server.runDir, { recursive: true });
  const running = currentPid(server, log);
  if (running !== undefined) {
    const readyMs = await waitFor(() => server.answers(), {
      what: `${server.name} (pid ${running}, already running)`,
      timeoutMs,
      giveUp: () => (isAlive(running) ? undefined : 'exited while starting'),
    });
    log(`${server.name} already running on ${server.address} (pid ${running}); nothing to do`);
    return { pid: running, started: false, readyMs, prepareMs: 0 };
  }
  for (const port of server.ports) {
    if (await isPortOpen(server.host, port)) {
      throw new Error(
        `${server.name}: port ${server.host}:${port} is taken by a process that is not ours; ` +
          `stop it or choose other ports with ${server.portVariables.join(' / ')}`,
      );
    }
  }
  const prepStart = Date.now();
  const spec = await server.prepare(log);
  const prepareMs = Date.now() - prepStart;
  const spawnedAt = Date.now();
  const pid = spawnDetached(spec);
  writePidFile(server.pidFile, pid);
  try {
    await waitFor(() => server.answers(), {
      what: `${server.name} on ${server.address}`,
      timeoutMs,
      giveUp: () => (isAlive(pid) ? undefined : 'the process exited'),
    });
    await server.warmUp?.();
    const readyMs = Date.now() - spawnedAt;
    log(
      `${server.name} listening on ${server.address} (pid ${pid}), ready ${(readyMs / 1000).toFixed(1)} s after spawn`,
    );
    return { pid, started: true, readyMs, prepareMs };
  } catch (err) {
    await stopProcess(pid).catch(() => undefined);
    removePidFile(server.pidFile, pid);
    throw new Error(
      `${(err as Error).message}\n--- last lines of ${server.logFile} ---\n${tail(server.logFile)}`,
    );
  }
}

/**
 * Stops every instance of `server` that is ours (the pid file's, and any process carrying the
 * marker whose pid file was lost), SIGTERM first then SIGKILL. Resolves with how many it stopped.
 */
export async function bringDown(server: ManagedServer, log: LauncherLog): Promise<number> {
  const pids = new Set(findProcessesByMarker(server.marker));
  const recorded = readPidFile(server.pidFile);
  if (recorded !== undefined && isOurs(recorded, server.marker)) pids.add(recorded);
  for (const pid of pids) {
    const how = await stopProcess(pid);
    log(
      `${server.name} (pid ${pid}) stopped${how === 'killed' ? ' with SIGKILL after the grace period' : ''}`,
    );
  }
  removePidFile(server.pidFile);
  if (pids.size === 0) log(`${server.name} was not running`);
  return pids.size;
}

/** The pid of our running instance, or undefined; clears a stale pid file, adopts an orphan. */
function currentPid(server: ManagedServer, log: LauncherLog): number | undefined {
  const recorded = readPidFile(server.pidFile);
  if (recorded !== undefined && isOurs(recorded, server.marker)) return recorded;
  if (recorded !== undefined) {
    log(`${server.name}: removing stale pid file ${server.pidFile} (pid ${recorded} is not ours or gone)`);
    removePidFile(server.pidFile);
  }
  const orphan = findProcessesByMarker(server.marker)[0];
  if (orphan !== undefined) {
    log(`${server.name}: found our process ${orphan} without a pid file; adopting it`);
    writePidFile(server.pidFile, orphan);
  }
  return orphan;
}

function tail(file: string, lines = 30): string {
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
}
