import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Where a non-TypeScript file shipped beside a module (a Lua script, a migration folder) may be, in
 * order of preference: next to the running module (tsx, vitest, or a build that copied it), then,
 * for a module compiled to `<root>/dist/libs/...`, the same place under `<root>/libs/...` (tsc copies
 * only .ts output, so a plain `tsc` build finds the files in the source tree it was built from).
 */
export function assetCandidates(relative: string, moduleUrl: string): string[] {
  const beside = fileURLToPath(new URL(relative, moduleUrl));
  const fromSource = beside.replace(/([\\/])dist([\\/])libs([\\/])/, '$1libs$3');
  return fromSource === beside ? [beside] : [beside, fromSource];
}

/** The first existing {@link assetCandidates} path; throws naming every place looked at when none exists. */
export function resolveAsset(relative: string, moduleUrl: string): string {
  const candidates = assetCandidates(relative, moduleUrl);
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) throw new Error(`${relative} not found; looked at ${candidates.join(', ')}`);
  return found;
}
