import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withFileLock } from './file-lock.js';
import type { LauncherLog } from './log.js';
import type { ManagedServer, UpResult } from './managed-server.js';
import { bringDown, bringUp } from './managed-server.js';
import { isAlive } from './process-control.js';

/** Waiting for another run's first fetch can take minutes on a cold machine. */
const LOCK_WAIT_MS = 15 * 60_000;

const lockFile = (s: ManagedServer): string => join(s.runDir, 'launcher.lock');
const leaseDir = (s: ManagedServer): string => join(s.runDir, 'leases');
/** Present while the running instance was started by a test run rather than by hand. */
const autoFile = (s: ManagedServer): string => join(s.runDir, 'started-by-tests');

/**
 * For test runs: ensures `server` runs and records a lease for process `holder`. Several runs on one
 * machine (engineers, CI) share one instance; {@link releaseServer} stops it only when the last lease
 * goes and a test run (not a person) started it.
 */
export function acquireServer(
  server: ManagedServer,
  timeoutMs: number,
  log: LauncherLog,
  holder = process.pid,
): Promise<UpResult> {
  return withFileLock(lockFile(server), LOCK_WAIT_MS, async () => {
    const up = await bringUp(server, timeoutMs, log);
    if (up.started) writeFileSync(autoFile(server), `${holder}\n`);
    mkdirSync(leaseDir(server), { recursive: true });
    writeFileSync(join(leaseDir(server), String(holder)), '');
    return up;
  });
}

/**
 * Drops `holder`'s lease (and those of dead processes). When no lease is left, the instance was
 * started by a test run, and `keep` is false, stops it. Resolves with whether it stopped it.
 */
export function releaseServer(
  server: ManagedServer,
  keep: boolean,
  log: LauncherLog,
  holder = process.pid,
): Promise<boolean> {
  return withFileLock(lockFile(server), LOCK_WAIT_MS, () => {
    rmSync(join(leaseDir(server), String(holder)), { force: true });
    return keep ? Promise.resolve(false) : stopIfIdle(server, log);
  });
}

/**
 * For CI's clean-up and aborted runs: stops the instance when a test run started it and no live
 * test run holds a lease (a crashed run's lease is dead). Never stops one started by hand.
 */
export function tidyServer(server: ManagedServer, log: LauncherLog): Promise<boolean> {
  return withFileLock(lockFile(server), LOCK_WAIT_MS, () => stopIfIdle(server, log));
}

/** For the `up` command: a person now owns the instance, so test runs never stop it. */
export function upByHand(server: ManagedServer, timeoutMs: number, log: LauncherLog): Promise<UpResult> {
  return withFileLock(lockFile(server), LOCK_WAIT_MS, async () => {
    const up = await bringUp(server, timeoutMs, log);
    rmSync(autoFile(server), { force: true });
    return up;
  });
}

/** For the `down` command: stops the instance whatever holds leases on it. */
export function downByHand(server: ManagedServer, log: LauncherLog): Promise<number> {
  return withFileLock(lockFile(server), LOCK_WAIT_MS, async () => {
    const stopped = await bringDown(server, log);
    rmSync(autoFile(server), { force: true });
    rmSync(leaseDir(server), { recursive: true, force: true });
    return stopped;
  });
}

async function stopIfIdle(server: ManagedServer, log: LauncherLog): Promise<boolean> {
  const others = liveLeases(server);
  if (others.length > 0) {
    log(`${server.name}: still used by test run(s) ${others.join(', ')}; leaving it running`);
    return false;
  }
  if (!existsSync(autoFile(server))) return false;
  await bringDown(server, log);
  rmSync(autoFile(server), { force: true });
  return true;
}

function liveLeases(server: ManagedServer): number[] {
  if (!existsSync(leaseDir(server))) return [];
  const live: number[] = [];
  for (const name of readdirSync(leaseDir(server))) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) live.push(pid);
    else rmSync(join(leaseDir(server), name), { force: true });
  }
  return live;
}
