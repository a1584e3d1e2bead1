import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LauncherLog } from './log.js';

/** Written last into a cache directory: its presence means the fill finished. */
export const COMPLETE_MARKER = '.complete';

/**
 * Returns `dir`, filling it first with `fill` unless an earlier fill completed. The fill writes into
 * a temporary sibling that is renamed into place only after the marker is written, so an interrupted
 * fetch (Ctrl-C, CI timeout) leaves nothing that a later run would mistake for a complete one.
 */
export async function ensureCacheDir(
  dir: string,
  what: string,
  fill: (tmpDir: string) => Promise<void>,
  log: LauncherLog,
): Promise<string> {
  if (existsSync(`${dir}/${COMPLETE_MARKER}`)) return dir;
  mkdirSync(dirname(dir), { recursive: true });
  const tmp = `${dir}.partial-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const started = Date.now();
  log(`${what}: not cached, fetching into ${dir} (first run only)`);
  try {
    await fill(tmp);
    writeFileSync(`${tmp}/${COMPLETE_MARKER}`, `${new Date().toISOString()}\n`);
    // A directory without the marker is a leftover of an older, interrupted layout: replace it.
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (existsSync(`${dir}/${COMPLETE_MARKER}`)) return dir; // a concurrent run finished first
    throw err;
  }
  log(`${what}: fetched in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return dir;
}
