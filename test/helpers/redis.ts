import { Redis } from 'ioredis';
import { REDIS_URL } from './env.js';
import { uniqueName } from './names.js';

export interface TestRedis {
  readonly redis: Redis;
  /** Every key a test writes starts with this, so runs never see each other's data. */
  readonly prefix: string;
  close(): Promise<void>;
}

/** A Redis connection plus a key prefix of the test's own. */
export function createTestRedis(prefix = 'tg'): TestRedis {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2, lazyConnect: false });
  return {
    redis,
    prefix: `${uniqueName(prefix)}:`,
    async close() {
      await redis.quit();
    },
  };
}
