import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { isAlive, processStartTime } from './process-control.js';

/**
 * Runs `fn` while holding an exclusive lock file (created with O_EXCL, holding the owner's pid).
 * Several test runs on one machine share the local servers; the lock makes "check, prepare,
 * spawn" and "release, stop" atomic between them. A lock whose owner died is taken over; the
 * owner's start time is recorded too, so a dead owner's pid reused by another process is no owner.
 * Rejects when the lock stays held by a live process for `timeoutMs`.
 */
export async function withFileLock<T>(path: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  mkdirSync(dirname(path), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, `${process.pid} ${processStartTime(process.pid) ?? '?'}\n`);
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = readOwner(path);
      // An empty file is a lock being written this instant; only a dead owner's lock is stale.
      if (owner !== undefined && owner.pid !== process.pid && !ownerAlive(owner)) {
        rmSync(path, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`lock ${path} is held by pid ${owner?.pid ?? '?'}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(path, { force: true });
  }
}

interface LockOwner {
  readonly pid: number;
  readonly start: string | undefined;
}

function readOwner(path: string): LockOwner | undefined {
  if (!existsSync(path)) return undefined;
  const [pid, start] = readFileSync(path, 'utf8').trim().split(' ');
  const n = Number(pid);
  if (!Number.isInteger(n) || n <= 0) return undefined;
  return { pid: n, start: start === '?' ? undefined : start };
}

function ownerAlive(owner: LockOwner): boolean {
  if (!isAlive(owner.pid)) return false;
  return owner.start === undefined || processStartTime(owner.pid) === owner.start;
}
