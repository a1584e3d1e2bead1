/** Redis adapters: state shared by every executor using the same Redis, atomic through Lua scripts. */
export { RedisIdempotencyStore, type RedisIdempotencyStoreOptions } from './redis-idempotency-store.js';
export { RedisRateLimiter, type RedisRateLimiterOptions } from './redis-rate-limiter.js';
export { LuaScript, luaScript, type LuaCall } from './lua-script.js';
export { RedisFactStore, type RedisFactStoreOptions } from './redis-fact-store.js';
export { RedisSingleUseStore, type RedisSingleUseStoreOptions } from './single-use-store.js';
export {
  RedisIdempotencyTombstones,
  type RedisIdempotencyTombstonesOptions,
} from './redis-idempotency-tombstones.js';
export {
  connectRedis,
  parseRedisClusterUrl,
  REDIS_CLUSTER_SCHEME,
  type RedisClusterTarget,
} from './connect.js';
export { RedisSessionStore, type RedisSessionStoreOptions } from './session-store.js';
