import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPLETE_MARKER, ensureCacheDir } from '../../../deploy/local/cache-dir.js';
import { silentLog } from '../../../deploy/local/log.js';

const fresh = () => mkdtempSync(join(tmpdir(), 'tg-cache-'));

describe('ensureCacheDir', () => {
  it('fills once, marks the fill complete, and reuses it afterwards', async () => {
    const dir = join(fresh(), 'kafka-x');
    let fills = 0;
    const fill = (tmp: string): Promise<void> => {
      fills++;
      writeFileSync(join(tmp, 'a.jar'), 'x');
      return Promise.resolve();
    };
    expect(await ensureCacheDir(dir, 'x', fill, silentLog)).toBe(dir);
    expect(await ensureCacheDir(dir, 'x', fill, silentLog)).toBe(dir);
    expect(fills).toBe(1);
    expect(readdirSync(dir).sort()).toEqual([COMPLETE_MARKER, 'a.jar'].sort());
  });

  it('leaves nothing behind when a fill fails, so the next run fetches again', async () => {
    const parent = fresh();
    const dir = join(parent, 'kafka-x');
    await expect(
      ensureCacheDir(
        dir,
        'x',
        (tmp) => {
          writeFileSync(join(tmp, 'half.jar'), 'x');
          return Promise.reject(new Error('network gone'));
        },
        silentLog,
      ),
    ).rejects.toThrow('network gone');
    expect(readdirSync(parent)).toEqual([]);

    let fills = 0;
    await ensureCacheDir(
      dir,
      'x',
      () => {
        fills++;
        return Promise.resolve();
      },
      silentLog,
    );
    expect(fills).toBe(1);
    expect(existsSync(join(dir, COMPLETE_MARKER))).toBe(true);
  });

  it('replaces a directory that has no completion marker', async () => {
    const dir = join(fresh(), 'kafka-x');
    await ensureCacheDir(dir, 'x', () => Promise.resolve(), silentLog);
    // Simulate an old interrupted layout: files but no marker.
    rmSync(join(dir, COMPLETE_MARKER));
    writeFileSync(join(dir, 'stale.jar'), 'x');
    await ensureCacheDir(
      dir,
      'x',
      (tmp) => Promise.resolve(writeFileSync(join(tmp, 'new.jar'), 'y')),
      silentLog,
    );
    expect(readdirSync(dir).sort()).toEqual([COMPLETE_MARKER, 'new.jar'].sort());
  });
});
