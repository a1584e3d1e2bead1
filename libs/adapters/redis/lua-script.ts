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
      if (!isNoScript(err)) throw err;
      // EVAL also caches the script, so the next call's EVALSHA succeeds.
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }

  /**
   * Runs the script once per call and answers their replies in the order of `calls`, sending every
   * call before awaiting any reply, so a batch costs one round trip: one pipeline of EVALSHA on a
   * single Redis; on a Cluster, concurrent calls, each to its keys' master (a Cluster pipeline needs
   * every key on one node). Each call is atomic on its own, the batch is not: when one call fails,
   * others may have run. Throws what Redis throws for a failing call (unreachable, script error),
   * apart from NOSCRIPT: those calls are sent again with EVAL, one more round trip.
   */
  async runAll(redis: Redis | Cluster, calls: readonly LuaCall[]): Promise<unknown[]> {
    if (redis.isCluster || calls.length <= 1) {
      return Promise.all(calls.map(({ keys, args }) => this.run(redis, keys, args)));
    }
    const pipeline = redis.pipeline();
    for (const { keys, args } of calls) pipeline.evalsha(this.sha1, keys.length, ...keys, ...args);
    const replies = await pipeline.exec();
    if (replies === null) throw new Error(`${this.name}: the pipeline was discarded`);
    return Promise.all(
      replies.map(async ([err, reply], i) => {
        if (err === null) return reply;
        if (!isNoScript(err)) throw err;
        const { keys, args } = calls[i]!;
        return redis.eval(this.source, keys.length, ...keys, ...args);
      }),
    );
  }
}

/** One run of a {@link LuaScript}: its KEYS and ARGV. */
export interface LuaCall {
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
}

/** Whether Redis answered NOSCRIPT: it does not hold the script (restart, failover, SCRIPT FLUSH). */
function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
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
