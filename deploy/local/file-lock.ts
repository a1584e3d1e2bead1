import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { isAlive, readPidFile } from './process-control.js';

/**
 * Runs `fn` while holding an exclusive lock file (created with O_EXCL, holding the owner's pid).
 * Several test runs on one machine share the local servers; the lock makes "check, prepare,
 * spawn" and "release, stop" atomic between them. A lock whose owner died is taken over.
 * Rejects when the lock stays held by a live process for `timeoutMs`.
 */
export async function withFileLock<T>(path: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  mkdirSync(dirname(path), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = readPidFile(path);
      // An empty file is a lock being written this instant; only a dead owner's lock is stale.
      if (owner !== undefined && owner !== process.pid && !isAlive(owner)) {
        rmSync(path, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`lock ${path} is held by pid ${owner ?? '?'}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(path, { force: true });
  }
}
