import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLog } from '../../../deploy/local/log.js';
import type { ManagedServer } from '../../../deploy/local/managed-server.js';
import { findProcessesByMarker } from '../../../deploy/local/process-control.js';
import {
  acquireServer,
  downByHand,
  releaseServer,
  tidyServer,
  upByHand,
} from '../../../deploy/local/shared-server.js';
import { isPortOpen } from '../../../deploy/local/wait-for.js';
import { uniqueName } from '../../helpers/names.js';
import { freePort } from '../../helpers/ports.js';

/**
 * A stand-in server: a Node process listening on a loopback port, with our marker. A test that
 * stops the stand-in and starts it again first moves it to a fresh free port (`movePort`): a
 * parallel test file may take the port it just gave up.
 */
async function tinyServer(): Promise<
  ManagedServer & { prepared: () => number; movePort: () => Promise<void> }
> {
  const runDir = mkdtempSync(join(tmpdir(), 'tg-shared-'));
  let port = await freePort();
  const marker = `-Dtoolgate.server=${uniqueName('unit_shared')}`;
  let prepared = 0;
  return {
    name: 'tiny',
    marker,
    runDir,
    pidFile: join(runDir, 'tiny.pid'),
    logFile: join(runDir, 'tiny.log'),
    get address() {
      return `127.0.0.1:${port}`;
    },
    host: '127.0.0.1',
    get ports() {
      return [port];
    },
    portVariables: ['TINY_PORT'],
    answers: () => isPortOpen('127.0.0.1', port),
    prepare() {
      prepared++;
      return Promise.resolve({
        command: process.execPath,
        args: ['-e', `require('net').createServer().listen(${port}, '127.0.0.1')`, '--', marker],
        cwd: runDir,
        logFile: join(runDir, 'tiny.log'),
      });
    },
    prepared: () => prepared,
    async movePort() {
      port = await freePort();
    },
  };
}

describe('shared local servers', () => {
  it('starts once for several runs and stops only when the last lease that started it goes', async () => {
    const s = await tinyServer();
    const a = await acquireServer(s, 10_000, silentLog, 1_000_001);
    // Leases are keyed by pid; use this process so the lease counts as live.
    const b = await acquireServer(s, 10_000, silentLog, process.pid);
    expect(a.started).toBe(true);
    expect(b.started).toBe(false);
    expect(s.prepared()).toBe(1);
    expect(findProcessesByMarker(s.marker)).toHaveLength(1);

    // Holder 1_000_001 does not exist, so its lease is dead; this process's lease is live.
    expect(await releaseServer(s, false, silentLog, 1_000_001)).toBe(false);
    expect(findProcessesByMarker(s.marker)).toHaveLength(1);
    expect(await releaseServer(s, false, silentLog, process.pid)).toBe(true);
    expect(findProcessesByMarker(s.marker)).toEqual([]);
  });

  it('never stops a server a person started, and keeps one when asked', async () => {
    const s = await tinyServer();
    await upByHand(s, 10_000, silentLog);
    await acquireServer(s, 10_000, silentLog);
    expect(await releaseServer(s, false, silentLog)).toBe(false);
    expect(findProcessesByMarker(s.marker)).toHaveLength(1);
    expect(await downByHand(s, silentLog)).toBe(1);
    expect(findProcessesByMarker(s.marker)).toEqual([]);

    await s.movePort();
    await acquireServer(s, 10_000, silentLog);
    expect(await releaseServer(s, true, silentLog)).toBe(false);
    expect(findProcessesByMarker(s.marker)).toHaveLength(1);
    await downByHand(s, silentLog);
  });

  it('tidies up after a crashed run, but not a server started by hand', async () => {
    const s = await tinyServer();
    // A run that died without teardown: its lease names a pid that no longer exists.
    await acquireServer(s, 10_000, silentLog, 1_000_002);
    expect(await tidyServer(s, silentLog)).toBe(true);
    expect(findProcessesByMarker(s.marker)).toEqual([]);

    await s.movePort();
    await upByHand(s, 10_000, silentLog);
    expect(await tidyServer(s, silentLog)).toBe(false);
    expect(findProcessesByMarker(s.marker)).toHaveLength(1);
    await downByHand(s, silentLog);
  });

  it('serialises concurrent acquisitions into one start', async () => {
    const s = await tinyServer();
    const ups = await Promise.all([1, 2, 3].map(() => acquireServer(s, 10_000, silentLog)));
    expect(ups.filter((u) => u.started)).toHaveLength(1);
    expect(s.prepared()).toBe(1);
    expect(findProcessesByMarker(s.marker)).toHaveLength(1);
    await downByHand(s, silentLog);
  });
});
