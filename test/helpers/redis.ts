import { Cluster, Redis } from 'ioredis';
import {
  connectRedis,
  REDIS_CLUSTER_SCHEME,
  SERVICE_REDIS_OPTIONS,
} from '../../libs/adapters/redis/connect.js';
import { REDIS_URL, redisClusterNodes } from './env.js';
import { uniqueName } from './names.js';

export interface TestRedis {
  readonly redis: Redis;
  /** Every key a test writes starts with this, so runs never see each other's data. */
  readonly prefix: string;
  close(): Promise<void>;
}

/** A Redis connection, configured as the services connect, plus a key prefix of the test's own. */
export function createTestRedis(prefix = 'tg'): TestRedis {
  const redis = new Redis(REDIS_URL, { ...SERVICE_REDIS_OPTIONS, lazyConnect: false });
  return {
    redis,
    prefix: `${uniqueName(prefix)}:`,
    async close() {
      await redis.quit();
    },
  };
}

/** A Redis Cluster client plus a key prefix of the test's own, and a view of every master. */
export interface TestRedisCluster {
  readonly redis: Cluster;
  readonly prefix: string;
  /** Every key under the prefix on each master, by master address (`host:port`). */
  keysByMaster(): Promise<Map<string, string[]>>;
  /** Deletes every key under the prefix (one DEL per key: keys live in different slots). */
  clear(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A client of the test Redis Cluster (seed nodes from the global setup), connected as the services
 * connect to a `redis-cluster://` URL. Keys under one prefix hash to slots all over the cluster: the
 * prefix carries no hash tag.
 */
export function createTestRedisCluster(prefix = 'tg'): TestRedisCluster {
  const redis = connectRedis(
    `${REDIS_CLUSTER_SCHEME}//${redisClusterNodes().join(',')}`,
    SERVICE_REDIS_OPTIONS,
  );
  if (!(redis instanceof Cluster)) throw new Error('a redis-cluster:// URL must give a Cluster client');
  const keyPrefix = `${uniqueName(prefix)}:`;
  const keysByMaster = async (): Promise<Map<string, string[]>> => {
    const byMaster = new Map<string, string[]>();
    for (const node of redis.nodes('master')) {
      byMaster.set(`${node.options.host}:${node.options.port}`, await node.keys(`${keyPrefix}*`));
    }
    return byMaster;
  };
  return {
    redis,
    prefix: keyPrefix,
    keysByMaster,
    async clear() {
      for (const keys of (await keysByMaster()).values()) {
        for (const key of keys) await redis.del(key);
      }
    },
    async close() {
      await redis.quit();
    },
  };
}
