import type { Cluster, Redis } from 'ioredis';
import type { FactContribution, FactSeriesQuery, FactStore } from '../../ports/fact-store.js';
import { checkFactContributions, checkFactQueries } from '../memory/fact-arguments.js';
import { luaScript } from './lua-script.js';

/** How a {@link RedisFactStore} names its keys. */
export interface RedisFactStoreOptions {
  /**
   * Prepended to every key (e.g. `toolgate:`): a series lives at `<prefix>{fact:<series key>}:at` and
   * `<prefix>{fact:<series key>}:units`. The braces make the two keys share a Cluster hash slot (the
   * hash tag `fact:<series key>` is never empty, whatever the series key); an empty `{}` in the prefix
   * would undo that, so it is refused.
   */
  readonly keyPrefix: string;
}

/**
 * How much longer than its window an idle series is kept: room for the clocks of the executors that
 * record and sum (their `atMs` and `nowMs`) being this far apart.
 */
const EXPIRY_MARGIN_MS = 60_000;

/**
 * Aggregate facts in Redis, shared by every executor using this Redis. A series is a sorted set (call
 * id by `atMs`) and a hash (call id to units) under one hash tag, so they share a Cluster slot and one
 * script sees both. `record` is one Lua script per contribution (lua/fact-record.lua): add unless the
 * call is already there, drop what fell out of the window, extend the expiry to window + 60 s, in one
 * atomic step. `sum` is one read-only script per query (lua/fact-sum.lua). A batch of either is sent
 * in one round trip (`LuaScript.runAll`). Times are the ones given (`nowMs`, `atMs`), never the
 * Redis server's; only expiry runs on its clock. A recorded contribution is durable as far as the
 * server's persistence and replication go. Throws when Redis is unreachable. See {@link FactStore}
 * for the contract.
 */
export class RedisFactStore implements FactStore {
  private readonly sumScript = luaScript('fact-sum.lua');
  private readonly recordScript = luaScript('fact-record.lua');
  private readonly keyPrefix: string;

  constructor(
    private readonly redis: Redis | Cluster,
    options: RedisFactStoreOptions,
  ) {
    if (options.keyPrefix.includes('{}')) {
      throw new RangeError(`keyPrefix must not contain '{}', got ${options.keyPrefix}`);
    }
    this.keyPrefix = options.keyPrefix;
  }

  async sum(queries: readonly FactSeriesQuery[], nowMs: number): Promise<number[]> {
    const checked = checkFactQueries(queries, nowMs);
    const replies = await this.sumScript.runAll(
      this.redis,
      checked.map(({ key, afterMs, exceptCallId }) => ({
        keys: this.seriesRedisKeys(key),
        args: exceptCallId === undefined ? [afterMs] : [afterMs, exceptCallId],
      })),
    );
    return replies.map((reply) => {
      if (typeof reply === 'number') return reply;
      throw new Error(`unexpected reply from fact-sum.lua: ${JSON.stringify(reply)}`);
    });
  }

  async record(contributions: readonly FactContribution[]): Promise<void> {
    const checked = checkFactContributions(contributions);
    const replies = await this.recordScript.runAll(
      this.redis,
      checked.map(({ key, callId, units, atMs, windowMs, dropUpToMs }) => ({
        keys: this.seriesRedisKeys(key),
        args: [callId, units, atMs, dropUpToMs, windowMs + EXPIRY_MARGIN_MS],
      })),
    );
    for (const reply of replies) {
      if (reply !== 0 && reply !== 1) {
        throw new Error(`unexpected reply from fact-record.lua: ${JSON.stringify(reply)}`);
      }
    }
  }

  /**
   * The Redis keys of one series, its sorted set then its hash (one hash slot); exposed for
   * operational tooling and tests that inspect TTLs.
   */
  seriesRedisKeys(seriesKey: string): [at: string, units: string] {
    const base = `${this.keyPrefix}{fact:${seriesKey}}`;
    return [`${base}:at`, `${base}:units`];
  }
}
