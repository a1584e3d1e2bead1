import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { Redis } from 'ioredis';
import { DATABASE_URL, REDIS_URL } from './helpers/env.js';

/**
 * Runs once before the integration project. Every server must be reachable or the run fails with a
 * message that says how to start it: tests never skip because a server is missing.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await checkPostgres();
  await checkRedis();
  // Kafka and the schema registry: wired by the local launchers (deploy/local).
  project.provide('kafkaBrokers', (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean));
  project.provide('schemaRegistryUrl', process.env.SCHEMA_REGISTRY_URL ?? '');
  return async () => {};
}

async function checkPostgres(): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (err) {
    throw new Error(
      `PostgreSQL is not reachable at ${DATABASE_URL} (${String(err)}). Start it with ` +
        `'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start', or set DATABASE_URL.`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function checkRedis(): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    throw new Error(
      `Redis is not reachable at ${REDIS_URL} (${String(err)}). Start it with ` +
        `'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no', or set REDIS_URL.`,
    );
  } finally {
    redis.disconnect();
  }
}
