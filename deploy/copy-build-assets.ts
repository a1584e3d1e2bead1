/**
 * `tsc` emits only JavaScript; the Redis Lua scripts, Postgres migrations and Avro schemas are read at
 * run time from beside their modules. This copies them into the build so it runs without the source
 * tree: `dist/schemas` is the copy a build publishes (its event codec registers those files).
 *
 * Usage: `tsx deploy/copy-build-assets.ts [outDir]`, outDir (default `dist`, relative to the
 * repository root) being the `--outDir` tsc emitted into.
 */
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = join(import.meta.dirname, '..');
const outDir = resolve(root, process.argv[2] ?? 'dist');
const assets = ['libs/adapters/redis/lua', 'libs/adapters/postgres/migrations', 'schemas'];

for (const dir of assets) {
  const from = join(root, dir);
  if (!existsSync(from)) throw new Error(`build asset folder missing: ${dir}`);
  const to = join(outDir, dir);
  if (resolve(to) === resolve(from)) throw new Error(`the build output ${outDir} is the source tree`);
  // Replaced, not merged: a file deleted from the source must not survive in the build.
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true });
  console.log(`copied ${dir} → ${to}`);
}
