/**
 * `tsc` emits only JavaScript; the Redis Lua scripts, Postgres migrations and Avro schemas are read at
 * run time from beside their modules. This copies them into dist/ so a build runs without the source
 * tree.
 */
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const assets = ['libs/adapters/redis/lua', 'libs/adapters/postgres/migrations', 'schemas'];

for (const dir of assets) {
  const from = join(root, dir);
  if (!existsSync(from)) throw new Error(`build asset folder missing: ${dir}`);
  cpSync(from, join(root, 'dist', dir), { recursive: true });
  console.log(`copied ${dir} → dist/${dir}`);
}
