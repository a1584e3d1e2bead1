import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  findProcessesByMarker,
  isAlive,
  isOurs,
  readPidFile,
  removePidFile,
  spawnDetached,
  stopProcess,
  writePidFile,
} from '../../../deploy/local/process-control.js';
import { uniqueName } from '../../helpers/names.js';

/**
 * Spawns a Node process running `code` with `marker` as an argument, and resolves once it has
 * written a `ready` file (after installing its handlers), so no test races the child's start.
 */
async function spawnNode(code: string, marker: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'tg-proc-'));
  const pid = spawnDetached({
    command: process.execPath,
    args: ['-e', `${code}; require('fs').writeFileSync('ready', '')`, '--', marker],
    cwd: dir,
    logFile: join(dir, 'out.log'),
  });
  for (let i = 0; i < 200 && !existsSync(join(dir, 'ready')); i++) {
    await new Promise((r) => setTimeout(r, 25));
  }
  if (!existsSync(join(dir, 'ready')))
    throw new Error(`child never got ready: ${readFileSync(join(dir, 'out.log'), 'utf8')}`);
  return pid;
}

describe('process control', () => {
  it('finds a spawned process by its marker and stops it with SIGTERM', async () => {
    const marker = `-Dtoolgate.server=${uniqueName('unit')}`;
    const pid = await spawnNode('setInterval(() => {}, 1000)', marker);
    expect(isAlive(pid)).toBe(true);
    expect(isOurs(pid, marker)).toBe(true);
    expect(isOurs(pid, `${marker}x`)).toBe(false);
    expect(findProcessesByMarker(marker)).toEqual([pid]);

    expect(await stopProcess(pid)).toBe('terminated');
    expect(isAlive(pid)).toBe(false);
    expect(findProcessesByMarker(marker)).toEqual([]);
    expect(await stopProcess(pid)).toBe('gone');
  });

  it('falls back to SIGKILL when the process ignores SIGTERM', async () => {
    const marker = `-Dtoolgate.server=${uniqueName('unit')}`;
    const pid = await spawnNode("process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)", marker);
    expect(await stopProcess(pid, 300)).toBe('killed');
    expect(isAlive(pid)).toBe(false);
  });

  it('reads, writes and conditionally removes pid files', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tg-pid-')), 'x.pid');
    expect(readPidFile(file)).toBeUndefined();
    writePidFile(file, 4242);
    expect(readPidFile(file)).toBe(4242);
    removePidFile(file, 1);
    expect(readPidFile(file)).toBe(4242);
    removePidFile(file, 4242);
    expect(readPidFile(file)).toBeUndefined();
    writeFileSync(file, 'garbage');
    expect(readPidFile(file)).toBeUndefined();
  });
});
