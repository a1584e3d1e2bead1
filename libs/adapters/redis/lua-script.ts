import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Redis, Cluster } from 'ioredis';

/**
 * Finds a file shipped beside this module's source. Under tsx (and vitest) the module runs from
 * libs/adapters/redis/, so `lua/<name>` sits next to it. Compiled output lives in dist/libs/...; tsc
 * does not copy .lua files, so when the copy next to the compiled module is missing we read the file
 * from the source tree the build came from (the same path without the leading `dist/`).
 */
function resolveLuaFile(name: string): string {
  const beside = fileURLToPath(new URL(`./lua/${name}`, import.meta.url));
  if (existsSync(beside)) return beside;
  const fromSource = beside.replace(/([\\/])dist([\\/])libs([\\/])/, '$1libs$3');
  if (fromSource !== beside && existsSync(fromSource)) return fromSource;
  throw new Error(
    `Lua script ${name} not found at ${beside}${fromSource !== beside ? ` or ${fromSource}` : ''}`,
  );
}

/**
 * One Lua script, run by SHA1 (EVALSHA) and re-sent with EVAL when the server answers NOSCRIPT
 * (restart, failover, SCRIPT FLUSH). Unlike ioredis `defineCommand` it does not add methods to the
 * caller's client, so several stores can share one connection. A script runs atomically in Redis.
 */
export class LuaScript {
  readonly source: string;
  readonly sha1: string;

  constructor(readonly name: string) {
    this.source = readFileSync(resolveLuaFile(name), 'utf8');
    this.sha1 = createHash('sha1').update(this.source).digest('hex');
  }

  /** Runs the script once. Throws what Redis throws (unreachable, script error), apart from NOSCRIPT. */
  async run(
    redis: Redis | Cluster,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha1, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      // EVAL also caches the script, so the next call's EVALSHA succeeds.
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

const loaded = new Map<string, LuaScript>();

/** The script `lua/<name>`, read from disk once per process. Throws when the file cannot be found. */
export function luaScript(name: string): LuaScript {
  let script = loaded.get(name);
  if (script === undefined) {
    script = new LuaScript(name);
    loaded.set(name, script);
  }
  return script;
}
