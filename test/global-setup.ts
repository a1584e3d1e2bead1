import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { Redis } from 'ioredis';
import { DATABASE_URL, REDIS_URL } from './helpers/env.js';
import { loadLocalConfig } from '../deploy/local/config.js';
import { acquireKafkaCluster, releaseKafkaCluster } from '../deploy/local/kafka-cluster-server.js';
import { acquireKafka, releaseKafka } from '../deploy/local/kafka-server.js';
import { tidyKeycloak } from '../deploy/local/keycloak-server.js';
import { kafkaAnswers } from '../deploy/local/kafka-probe.js';
import { stderrLog } from '../deploy/local/log.js';
import { acquireRedisCluster, releaseRedisCluster } from '../deploy/local/redis-cluster-server.js';
import { acquireRegistry, releaseRegistry } from '../deploy/local/registry-server.js';
import { registryAnswers } from '../deploy/local/registry-probe.js';
import { waitFor } from '../deploy/local/wait-for.js';
import { failSetup } from './helpers/setup-failure.js';

type Stop = () => Promise<unknown>;

/**
 * Runs once before the integration project. Every server must be reachable or the run ends, exit
 * code 1, with a message that says how to start it and that no test ran (failSetup): tests never
 * skip because a server is missing.
 *
 * Kafka and the schema registry: KAFKA_BROKERS / SCHEMA_REGISTRY_URL point at running servers;
 * when unset, the local launchers (deploy/local) start them, or reuse ours if already up, and this
 * run takes a lease. Teardown stops a server only when a test run started it (not `npm run
 * kafka:up`), no other run still holds a lease, and TOOLGATE_KEEP_SERVERS is not 1.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  try {
    await checkPostgres();
    await checkRedis();
  } catch (err) {
    failSetup(err);
  }
  const cfg = loadLocalConfig(process.env);
  const keep = process.env.TOOLGATE_KEEP_SERVERS === '1';
  // Keycloak is started by the test files that need it (test/helpers/keycloak.ts), not here: a run
  // without them never pays for it. At the end of the run it is stopped when a test run started
  // it and no live process (another run's worker) holds a lease.
  const stops: Stop[] = keep ? [] : [() => tidyKeycloak(cfg, stderrLog)];
  const teardown = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    project.provide(
      'kafkaBrokers',
      await provision(stops, {
        name: 'Kafka broker',
        given: listFromEnv('KAFKA_BROKERS'),
        check: {
          answers: kafkaAnswers,
          what: (brokers) => `Kafka at ${brokers.join(',')}`,
          hint: `Start that broker, or unset KAFKA_BROKERS so the tests start a local one ('npm run kafka:up' starts it by hand).`,
        },
        acquire: async () => (await acquireKafka(cfg, stderrLog)).brokers,
        release: () => releaseKafka(cfg, keep, stderrLog),
        startHint: `Start it by hand with 'npm run kafka:up' (needs Maven and Java 17+), or set KAFKA_BROKERS.`,
      }),
    );
    project.provide(
      'schemaRegistryUrl',
      await provision(stops, {
        name: 'schema registry',
        given: process.env.SCHEMA_REGISTRY_URL || undefined,
        check: {
          answers: registryAnswers,
          what: (url) => `schema registry at ${url}`,
          hint:
            `Start that registry (a Confluent-compatible base URL), or unset ` +
            `SCHEMA_REGISTRY_URL so the tests start a local one ('npm run registry:up' starts it by hand).`,
        },
        acquire: async () => (await acquireRegistry(cfg, stderrLog)).url,
        release: () => releaseRegistry(cfg, keep, stderrLog),
        startHint: `Start it by hand with 'npm run registry:up' (needs Maven and Java 21+), or set SCHEMA_REGISTRY_URL.`,
      }),
    );
    // The Redis Cluster the cluster contract suites run on: REDIS_CLUSTER_NODES (comma-separated
    // host:port seeds) when given, else the local launcher's three masters with a replica each.
    project.provide(
      'redisClusterNodes',
      await provision(stops, {
        name: 'Redis Cluster',
        given: listFromEnv('REDIS_CLUSTER_NODES'),
        acquire: async () => (await acquireRedisCluster(cfg, stderrLog)).nodes,
        release: () => releaseRedisCluster(cfg, keep, stderrLog),
        startHint: `Start it by hand with 'npm run redis-cluster:up' (needs redis-server and redis-cli), or set REDIS_CLUSTER_NODES.`,
      }),
    );
    // The replicated Kafka cluster the cluster contract suites run on: KAFKA_CLUSTER_BROKERS when
    // given, else the local launcher's three nodes (replication factor 3, min.insync.replicas 2).
    project.provide(
      'kafkaClusterBrokers',
      await provision(stops, {
        name: 'Kafka cluster',
        given: listFromEnv('KAFKA_CLUSTER_BROKERS'),
        acquire: async () => (await acquireKafkaCluster(cfg, stderrLog)).brokers,
        release: () => releaseKafkaCluster(cfg, keep, stderrLog),
        startHint: `Start it by hand with 'npm run kafka-cluster:up', or set KAFKA_CLUSTER_BROKERS.`,
      }),
    );
  } catch (err) {
    await teardown();
    failSetup(err);
  }
  return teardown;
}

/** A comma-separated list in the environment variable `name`; undefined when it names nothing. */
function listFromEnv(name: string): string[] | undefined {
  const list = (process.env[name] ?? '').split(',').filter(Boolean);
  return list.length > 0 ? list : undefined;
}

/** Where a server of the run comes from: the environment, or the local launcher. */
interface ServerSource<T> {
  /** The local server's name in the message when it cannot be started. */
  readonly name: string;
  /** The server the environment names, if it names one. */
  readonly given: T | undefined;
  /** How a given server is waited for (up to 15 s); without it, a given server is taken as it is. */
  readonly check?: {
    readonly answers: (given: T) => Promise<boolean>;
    readonly what: (given: T) => string;
    /** What to do when it does not answer. */
    readonly hint: string;
  };
  /** Starts the local server, or reuses ours if up, taking a lease. */
  readonly acquire: () => Promise<T>;
  /** Drops the lease (stopping the server when the launchers say so). */
  readonly release: () => Promise<unknown>;
  /** What to do when the local server cannot be started. */
  readonly startHint: string;
}

/**
 * The server `source` gives: a given one once it answers, else the local one, whose release is
 * pushed onto `stops`. Rejects with a message that says how to start the server.
 */
async function provision<T>(stops: Stop[], source: ServerSource<T>): Promise<T> {
  const { given, check } = source;
  if (given !== undefined) {
    if (check !== undefined) {
      await waitFor(() => check.answers(given), { what: check.what(given), timeoutMs: 15_000 }).catch(
        (err: unknown) => {
          throw new Error(`${message(err)}. ${check.hint}`);
        },
      );
    }
    return given;
  }
  try {
    const up = await source.acquire();
    stops.push(source.release);
    return up;
  } catch (err) {
    throw new Error(`Could not start the local ${source.name}: ${message(err)}\n${source.startHint}`);
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Connects with `connect`, and always `close`s; rejects, when that fails, with a message naming
 * `what` at `url` and how to start it.
 */
async function checkReachable(
  what: string,
  url: string,
  startHint: string,
  connect: () => Promise<unknown>,
  close: () => Promise<unknown>,
): Promise<void> {
  try {
    await connect();
  } catch (err) {
    throw new Error(`${what} is not reachable at ${url} (${String(err)}). ${startHint}`);
  } finally {
    await close().catch(() => undefined);
  }
}

async function checkPostgres(): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3000 });
  await checkReachable(
    'PostgreSQL',
    DATABASE_URL,
    `Start it with 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start', or set DATABASE_URL.`,
    async () => {
      await client.connect();
      await client.query('SELECT 1');
    },
    () => client.end(),
  );
}

async function checkRedis(): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000 });
  await checkReachable(
    'Redis',
    REDIS_URL,
    `Start it with 'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no', or set REDIS_URL.`,
    async () => {
      await redis.connect();
      await redis.ping();
    },
    async () => redis.disconnect(),
  );
}
