import type { Cluster, Redis } from 'ioredis';
import type { BucketLimit, RateLimiter, TakeResult } from '../../ports/rate-limiter.js';
import { checkKey, checkTake } from '../memory/argument-checks.js';
import { luaScript } from './lua-script.js';

/** How a {@link RedisRateLimiter} names its keys. */
export interface RedisRateLimiterOptions {
  /** Prepended to every key this limiter writes (e.g. `toolgate:`); buckets live at `<prefix>rl:<bucket>`. */
  readonly keyPrefix: string;
}

/**
 * Token buckets in Redis, shared by every executor using this Redis: one Lua script
 * (lua/token-bucket-take.lua) refills and takes atomically on the Redis server's clock, so several
 * executors spend one budget and never both take the last token. An idle bucket's key expires once it
 * would be full again. Throws when Redis is unreachable (callers fail closed).
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly script = luaScript('token-bucket-take.lua');
  private readonly keyPrefix: string;

  constructor(
    private readonly redis: Redis | Cluster,
    options: RedisRateLimiterOptions,
  ) {
    this.keyPrefix = options.keyPrefix;
  }

  async take(bucketKey: string, limit: BucketLimit, cost?: number): Promise<TakeResult> {
    checkKey('bucketKey', bucketKey);
    const effectiveCost = checkTake(limit, cost);
    const reply = await this.script.run(
      this.redis,
      [this.bucketRedisKey(bucketKey)],
      [limit.capacity, limit.refillPerSecond, effectiveCost],
    );
    const [allowed, remaining, retryAfterMs] = Array.isArray(reply) ? (reply as unknown[]) : [];
    if (typeof allowed === 'number' && typeof remaining === 'number' && typeof retryAfterMs === 'number') {
      return { allowed: allowed === 1, remaining, retryAfterMs };
    }
    throw new Error(`unexpected reply from token-bucket-take.lua: ${JSON.stringify(reply)}`);
  }

  /** The Redis key of one bucket; exposed for operational tooling and tests that inspect TTLs. */
  bucketRedisKey(bucketKey: string): string {
    return `${this.keyPrefix}rl:${bucketKey}`;
  }
}
