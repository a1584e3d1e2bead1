import type { Cluster, Redis } from 'ioredis';
import type { IdempotencyTombstones } from '../../ports/idempotency-tombstones.js';
import { checkDurationMs, checkKey } from '../memory/argument-checks.js';

/** How {@link RedisIdempotencyTombstones} names its keys. */
export interface RedisIdempotencyTombstonesOptions {
  /** Prepended to every key (e.g. `toolgate:`): tombstones live at `<prefix>idem-seen:<key>`. */
  readonly keyPrefix: string;
}

/**
 * Tombstones in Redis: `mark` is one `SET … PX … GET` (set and read the previous value atomically;
 * Redis 6.2 or later), `clear` one `DEL`, each a single command on a single key (so it works with a
 * Cluster); marks expire through the key's TTL.
 */
export class RedisIdempotencyTombstones implements IdempotencyTombstones {
  private readonly keyPrefix: string;

  constructor(
    private readonly redis: Redis | Cluster,
    options: RedisIdempotencyTombstonesOptions,
  ) {
    this.keyPrefix = options.keyPrefix;
  }

  async mark(key: string, ttlMs: number): Promise<boolean> {
    checkKey('key', key);
    const ttl = checkDurationMs('ttlMs', ttlMs);
    return (await this.redis.set(this.tombstoneKey(key), '1', 'PX', ttl, 'GET')) !== null;
  }

  async clear(key: string): Promise<void> {
    checkKey('key', key);
    await this.redis.del(this.tombstoneKey(key));
  }

  /** The Redis key of one tombstone; exposed for operational tooling and tests. */
  tombstoneKey(key: string): string {
    return `${this.keyPrefix}idem-seen:${key}`;
  }
}
