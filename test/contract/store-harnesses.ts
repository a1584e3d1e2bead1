import pg from 'pg';
import { Redis, type Cluster } from 'ioredis';
import { ManualClock } from '../../libs/core/manual-clock.js';
import type { IdempotencyStore } from '../../libs/ports/idempotency-store.js';
import type { RateLimiter } from '../../libs/ports/rate-limiter.js';
import {
  MemoryIdempotencyStore,
  MemoryRateLimiter,
  type IdempotencyStoreOptions,
} from '../../libs/adapters/memory/index.js';
import { RedisIdempotencyStore, RedisRateLimiter } from '../../libs/adapters/redis/index.js';
import { SERVICE_REDIS_OPTIONS } from '../../libs/adapters/redis/connect.js';
import {
  PostgresIdempotencyStore,
  PostgresRateLimiter,
  migrate,
} from '../../libs/adapters/postgres/index.js';
import { DATABASE_URL, REDIS_URL } from '../helpers/env.js';
import { createTestRedis, createTestRedisCluster } from '../helpers/redis.js';
import { createTestSchema } from '../helpers/postgres.js';

/**
 * One adapter under test, as the contract suites see it: the instance, a second instance on the same
 * backing store (another connection or pool, as a second executor would have), and a way to let time
 * pass for the store.
 */
export interface Harness<T> {
  readonly subject: T;
  /** Another client of the same backing store. The memory adapters have no other client: the same instance. */
  readonly peer: T;
  /** The store's clock, read from the test process (the manual clock; for servers, this machine's clock). */
  now(): number;
  /** Lets `ms` pass for the store: advances the manual clock (memory) or really waits (Redis, Postgres). */
  pass(ms: number): Promise<void>;
  close(): Promise<void>;
}

export interface AdapterCase<T, O = void> {
  readonly name: string;
  create(options: O): Promise<Harness<T>>;
}

/** Test records must not linger for the 7-day default; retention is overridden per test where it matters. */
const TEST_RETENTION_MS = 60_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `make` on a manual clock starting at 1 700 000 000 000 ms; the peer is the same instance. */
export function memoryHarness<T>(make: (clock: ManualClock) => T): Harness<T> {
  const clock = new ManualClock(1_700_000_000_000);
  const subject = make(clock);
  return {
    subject,
    peer: subject,
    now: () => clock.now(),
    pass: (ms) => clock.advance(ms),
    close: async () => {},
  };
}

/**
 * `make` on a test Redis namespace (`name` prefixes it), the peer on a second connection to the same
 * namespace; `close` deletes the namespace's keys.
 */
export async function redisHarness<T>(
  make: (redis: Redis, prefix: string) => T,
  name = 'contract',
): Promise<Harness<T>> {
  const test = createTestRedis(name);
  const second = new Redis(REDIS_URL, SERVICE_REDIS_OPTIONS);
  return {
    subject: make(test.redis, test.prefix),
    peer: make(second, test.prefix),
    now: () => Date.now(),
    pass: sleep,
    async close() {
      const keys = await test.redis.keys(`${test.prefix}*`);
      if (keys.length > 0) await test.redis.del(...keys);
      await second.quit();
      await test.close();
    },
  };
}

/**
 * `make` on a test namespace of the Redis Cluster (`name` prefixes it; its keys spread over every
 * master), the peer on a second cluster client; `close` deletes the namespace's keys on every master.
 */
export async function redisClusterHarness<T>(
  make: (redis: Cluster, prefix: string) => T,
  name = 'contract',
): Promise<Harness<T>> {
  const test = createTestRedisCluster(name);
  const second = createTestRedisCluster(name);
  return Promise.resolve({
    subject: make(test.redis, test.prefix),
    peer: make(second.redis, test.prefix),
    now: () => Date.now(),
    pass: sleep,
    async close() {
      await test.clear();
      await second.close();
      await test.close();
    },
  });
}

/**
 * `make` on a fresh migrated schema (`name` prefixes it), the peer on a second pool of `max`
 * connections to the same schema; `close` ends that pool and drops the schema.
 */
export async function postgresHarness<T>(
  make: (pool: pg.Pool) => T,
  name = 'contract',
  max = 10,
): Promise<Harness<T>> {
  const test = await createTestSchema(name);
  await migrate(test.pool);
  const second = new pg.Pool({
    connectionString: DATABASE_URL,
    max,
    options: `-c search_path="${test.schema}"`,
  });
  return {
    subject: make(test.pool),
    peer: make(second),
    now: () => Date.now(),
    pass: sleep,
    async close() {
      await second.end();
      await test.drop();
    },
  };
}

export const idempotencyStoreAdapters: readonly AdapterCase<IdempotencyStore, IdempotencyStoreOptions>[] = [
  {
    name: 'memory',
    create: (options) =>
      Promise.resolve(
        memoryHarness(
          (clock) =>
            new MemoryIdempotencyStore(clock, { abandonedRetentionMs: TEST_RETENTION_MS, ...options }),
        ),
      ),
  },
  {
    name: 'redis',
    create: (options) =>
      redisHarness(
        (redis, keyPrefix) =>
          new RedisIdempotencyStore(redis, {
            keyPrefix,
            abandonedRetentionMs: TEST_RETENTION_MS,
            ...options,
          }),
      ),
  },
  {
    name: 'redis-cluster',
    create: (options) =>
      redisClusterHarness(
        (redis, keyPrefix) =>
          new RedisIdempotencyStore(redis, {
            keyPrefix,
            abandonedRetentionMs: TEST_RETENTION_MS,
            ...options,
          }),
      ),
  },
  {
    name: 'postgres',
    create: (options) =>
      postgresHarness(
        (pool) => new PostgresIdempotencyStore(pool, { abandonedRetentionMs: TEST_RETENTION_MS, ...options }),
      ),
  },
];

export const rateLimiterAdapters: readonly AdapterCase<RateLimiter>[] = [
  { name: 'memory', create: () => Promise.resolve(memoryHarness((clock) => new MemoryRateLimiter(clock))) },
  {
    name: 'redis',
    create: () => redisHarness((redis, keyPrefix) => new RedisRateLimiter(redis, { keyPrefix })),
  },
  {
    name: 'redis-cluster',
    create: () => redisClusterHarness((redis, keyPrefix) => new RedisRateLimiter(redis, { keyPrefix })),
  },
  { name: 'postgres', create: () => postgresHarness((pool) => new PostgresRateLimiter(pool)) },
];
