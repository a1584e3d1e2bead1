import type { Cluster, Redis } from 'ioredis';
import type { SessionStore } from '../../ports/session-store.js';
import { checkDurationMs, checkKey } from '../memory/argument-checks.js';

/** How a {@link RedisSessionStore} names its keys. */
export interface RedisSessionStoreOptions {
  /** Prepended to every id (e.g. `toolgate:ops-console:session:`); one prefix per kind of record. */
  readonly keyPrefix: string;
}

/**
 * Session records in Redis, shared by every replica using this Redis: `SET PX`, `GET`, `GETDEL`,
 * `DEL` on `<prefix><id>`, each one atomic command on one key (so it works with a Cluster). Expiry
 * is the key's TTL, in the Redis server's time. See {@link SessionStore} for the contract.
 */
export class RedisSessionStore implements SessionStore {
  readonly #keyPrefix: string;

  constructor(
    private readonly redis: Redis | Cluster,
    options: RedisSessionStoreOptions,
  ) {
    this.#keyPrefix = options.keyPrefix;
  }

  async put(id: string, value: string, ttlMs: number): Promise<void> {
    checkKey('id', id);
    await this.redis.set(this.#key(id), value, 'PX', checkDurationMs('ttlMs', ttlMs));
  }

  async get(id: string): Promise<string | undefined> {
    checkKey('id', id);
    return (await this.redis.get(this.#key(id))) ?? undefined;
  }

  async take(id: string): Promise<string | undefined> {
    checkKey('id', id);
    return (await this.redis.getdel(this.#key(id))) ?? undefined;
  }

  async delete(id: string): Promise<boolean> {
    checkKey('id', id);
    return (await this.redis.del(this.#key(id))) > 0;
  }

  #key(id: string): string {
    return `${this.#keyPrefix}${id}`;
  }
}
