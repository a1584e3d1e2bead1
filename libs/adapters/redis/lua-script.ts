import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Redis, Cluster } from 'ioredis';
import { resolveAsset } from '../memory/asset-path.js';

/**
 * One Lua script, run by SHA1 (EVALSHA) and re-sent with EVAL when the server answers NOSCRIPT
 * (restart, failover, SCRIPT FLUSH). Unlike ioredis `defineCommand` it does not add methods to the
 * caller's client, so several stores can share one connection. A script runs atomically in Redis.
 */
export class LuaScript {
  readonly source: string;
  readonly sha1: string;

  /** `name` labels the script for diagnostics; `source` is its Lua text. */
  constructor(
    readonly name: string,
    source: string,
  ) {
    this.source = source;
    this.sha1 = createHash('sha1').update(source).digest('hex');
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

/**
 * The script `lua/<name>` beside this module, read from disk once per process (found from tsx and from
 * compiled output, see resolveAsset). Throws when the file cannot be found.
 */
export function luaScript(name: string): LuaScript {
  let script = loaded.get(name);
  if (script === undefined) {
    script = new LuaScript(name, readFileSync(resolveAsset(`./lua/${name}`, import.meta.url), 'utf8'));
    loaded.set(name, script);
  }
  return script;
}
