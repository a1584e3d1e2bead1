import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withFileLock } from '../../../deploy/local/file-lock.js';
import { processStartTime } from '../../../deploy/local/process-control.js';

const lockPath = () => join(mkdtempSync(join(tmpdir(), 'tg-lock-')), 'x.lock');

describe('withFileLock', () => {
  it('runs holders one at a time and removes the lock afterwards', async () => {
    const path = lockPath();
    let inside = 0;
    let maxInside = 0;
    const order: number[] = [];
    await Promise.all(
      [1, 2, 3, 4].map((n) =>
        withFileLock(path, 10_000, async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          await new Promise((r) => setTimeout(r, 20));
          order.push(n);
          inside--;
        }),
      ),
    );
    expect(maxInside).toBe(1);
    expect(order.sort()).toEqual([1, 2, 3, 4]);
    expect(existsSync(path)).toBe(false);
  });

  it('takes over a lock whose owner is dead, and releases it when the holder throws', async () => {
    const path = lockPath();
    writeFileSync(path, '1000001\n');
    await expect(withFileLock(path, 2_000, () => Promise.reject(new Error('inside')))).rejects.toThrow(
      'inside',
    );
    expect(existsSync(path)).toBe(false);
  });

  it('takes over a lock whose pid now belongs to a process that started later', async () => {
    const path = lockPath();
    // Our parent is alive, but not since tick 1: the recorded owner is a dead predecessor.
    writeFileSync(path, `${process.ppid} 1\n`);
    await withFileLock(path, 2_000, () => Promise.resolve());
    expect(existsSync(path)).toBe(false);
  });

  it('gives up on a lock a live process holds', async () => {
    const path = lockPath();
    writeFileSync(path, `${process.ppid} ${processStartTime(process.ppid)}\n`);
    await expect(withFileLock(path, 300, () => Promise.resolve())).rejects.toThrow(/held by pid/);
  });
});
