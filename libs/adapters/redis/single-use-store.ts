import type { Cluster, Redis } from 'ioredis';
import type { ConsumeResult, SingleUseStore } from '../../ports/single-use-store.js';
import { checkDurationMs, checkKey } from '../memory/argument-checks.js';
import { luaScript } from './lua-script.js';

/** How a {@link RedisSingleUseStore} names its keys. */
export interface RedisSingleUseStoreOptions {
  /**
   * Prepended to every key (e.g. `toolgate:`): used ids live at `<prefix>single-use:<id>`.
   */
  readonly keyPrefix: string;
}

/**
 * Single-use ids in Redis, shared by every executor using this Redis. consume is one Lua script
 * (lua/single-use-consume.lua): a `SET NX PX` plus, for a
 * retry, a holder comparison, in one atomic step. Entries expire through their key's TTL. Works with a Cluster: every script touches one key.
 * Throws when Redis is unreachable. See {@link SingleUseStore} for the contract.
 */
export class RedisSingleUseStore implements SingleUseStore {
  private readonly consumeScript = luaScript('single-use-consume.lua');
  private readonly keyPrefix: string;

  constructor(
    private readonly redis: Redis | Cluster,
    options: RedisSingleUseStoreOptions,
  ) {
    this.keyPrefix = options.keyPrefix;
  }

  async consume(id: string, ttlMs: number, holder = ''): Promise<ConsumeResult> {
    checkKey('id', id);
    const ttl = checkDurationMs('ttlMs', ttlMs);
    const reply = await this.consumeScript.run(this.redis, [this.usedKey(id)], [holder, ttl]);
    return reply === 1 ? 'consumed' : 'already-used';
  }

  private usedKey(id: string): string {
    return `${this.keyPrefix}single-use:${id}`;
  }
}
