import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { Redis } from 'ioredis';
import { DATABASE_URL, REDIS_URL } from './helpers/env.js';
import type { LocalServersConfig } from '../deploy/local/config.js';
import { loadLocalConfig } from '../deploy/local/config.js';
import { acquireKafkaCluster, releaseKafkaCluster } from '../deploy/local/kafka-cluster-server.js';
import { acquireKafka, releaseKafka } from '../deploy/local/kafka-server.js';
import { kafkaAnswers } from '../deploy/local/kafka-probe.js';
import { stderrLog } from '../deploy/local/log.js';
import { acquireRedisCluster, releaseRedisCluster } from '../deploy/local/redis-cluster-server.js';
import { acquireRegistry, releaseRegistry } from '../deploy/local/registry-server.js';
import { registryAnswers } from '../deploy/local/registry-probe.js';
import { waitFor } from '../deploy/local/wait-for.js';

type Stop = () => Promise<unknown>;

/**
 * Runs once before the integration project. Every server must be reachable or the run fails with a
 * message that says how to start it: tests never skip because a server is missing.
 *
 * Kafka and the schema registry: KAFKA_BROKERS / SCHEMA_REGISTRY_URL point at running servers;
 * when unset, the local launchers (deploy/local) start them, or reuse ours if already up, and this
 * run takes a lease. Teardown stops a server only when a test run started it (not `npm run
 * kafka:up`), no other run still holds a lease, and TOOLGATE_KEEP_SERVERS is not 1.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await checkPostgres();
  await checkRedis();
  const cfg = loadLocalConfig(process.env);
  const keep = process.env.TOOLGATE_KEEP_SERVERS === '1';
  const stops: Stop[] = [];
  const teardown = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    project.provide('kafkaBrokers', await kafka(cfg, keep, stops));
    project.provide('schemaRegistryUrl', await schemaRegistry(cfg, keep, stops));
    project.provide('redisClusterNodes', await redisCluster(cfg, keep, stops));
    project.provide('kafkaClusterBrokers', await kafkaCluster(cfg, keep, stops));
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}

async function kafka(cfg: LocalServersConfig, keep: boolean, stops: Stop[]): Promise<string[]> {
  const given = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
  if (given.length > 0) {
    await waitFor(() => kafkaAnswers(given), {
      what: `Kafka at ${given.join(',')}`,
      timeoutMs: 15_000,
    }).catch((err: unknown) => {
      throw new Error(
        `${message(err)}. Start that broker, or unset KAFKA_BROKERS so the tests start a local one ` +
          `('npm run kafka:up' starts it by hand).`,
      );
    });
    return given;
  }
  try {
    const up = await acquireKafka(cfg, stderrLog);
    stops.push(() => releaseKafka(cfg, keep, stderrLog));
    return up.brokers;
  } catch (err) {
    throw new Error(
      `Could not start the local Kafka broker: ${message(err)}\n` +
        `Start it by hand with 'npm run kafka:up' (needs Maven and Java 17+), or set KAFKA_BROKERS.`,
    );
  }
}

async function schemaRegistry(cfg: LocalServersConfig, keep: boolean, stops: Stop[]): Promise<string> {
  const given = process.env.SCHEMA_REGISTRY_URL;
  if (given) {
    await waitFor(() => registryAnswers(given), {
      what: `schema registry at ${given}`,
      timeoutMs: 15_000,
    }).catch((err: unknown) => {
      throw new Error(
        `${message(err)}. Start that registry (a Confluent-compatible base URL), or unset ` +
          `SCHEMA_REGISTRY_URL so the tests start a local one ('npm run registry:up' starts it by hand).`,
      );
    });
    return given;
  }
  try {
    const up = await acquireRegistry(cfg, stderrLog);
    stops.push(() => releaseRegistry(cfg, keep, stderrLog));
    return up.url;
  } catch (err) {
    throw new Error(
      `Could not start the local schema registry: ${message(err)}\n` +
        `Start it by hand with 'npm run registry:up' (needs Maven and Java 21+), or set SCHEMA_REGISTRY_URL.`,
    );
  }
}

/**
 * The replicated Kafka cluster the cluster contract suites run on: KAFKA_CLUSTER_BROKERS when
 * given, else the local launcher's three nodes (replication factor 3, min.insync.replicas 2).
 */
async function kafkaCluster(cfg: LocalServersConfig, keep: boolean, stops: Stop[]): Promise<string[]> {
  const given = (process.env.KAFKA_CLUSTER_BROKERS ?? '').split(',').filter(Boolean);
  if (given.length > 0) return given;
  try {
    const up = await acquireKafkaCluster(cfg, stderrLog);
    stops.push(() => releaseKafkaCluster(cfg, keep, stderrLog));
    return up.brokers;
  } catch (err) {
    throw new Error(
      `Could not start the local Kafka cluster: ${message(err)}\n` +
        `Start it by hand with 'npm run kafka-cluster:up', or set KAFKA_CLUSTER_BROKERS.`,
    );
  }
}

/**
 * The Redis Cluster the cluster contract suites run on: REDIS_CLUSTER_NODES (comma-separated
 * host:port seeds) when given, else the local launcher's three masters with a replica each.
 */
async function redisCluster(cfg: LocalServersConfig, keep: boolean, stops: Stop[]): Promise<string[]> {
  const given = (process.env.REDIS_CLUSTER_NODES ?? '').split(',').filter(Boolean);
  if (given.length > 0) return given;
  try {
    const up = await acquireRedisCluster(cfg, stderrLog);
    stops.push(() => releaseRedisCluster(cfg, keep, stderrLog));
    return up.nodes;
  } catch (err) {
    throw new Error(
      `Could not start the local Redis Cluster: ${message(err)}\n` +
        `Start it by hand with 'npm run redis-cluster:up' (needs redis-server and redis-cli), or set REDIS_CLUSTER_NODES.`,
    );
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
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
