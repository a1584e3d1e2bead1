/**
 * The servers a benchmark needs. Postgres and Redis are this machine's; Kafka and the schema
 * registry are the local launchers' (deploy/local), taken with a lease exactly as a test run takes
 * them — so a benchmark never stops a server someone else is using, and stops one only if it
 * started it and nobody else holds a lease. KAFKA_BROKERS / SCHEMA_REGISTRY_URL point elsewhere.
 */
import { KAFKA_VERSION, loadLocalConfig } from '../../deploy/local/config.js';
import { acquireKafka, releaseKafka } from '../../deploy/local/kafka-server.js';
import { stderrLog } from '../../deploy/local/log.js';
import { acquireRegistry, releaseRegistry } from '../../deploy/local/registry-server.js';
import { runMain } from './report.js';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchServers {
  readonly brokers: string[];
  readonly registryUrl: string;
  readonly redisUrl: string;
  /** "Apache Kafka 4.1.1 (local launcher)" or "external" when KAFKA_BROKERS was given. */
  readonly kafkaVersion: string;
  /** Drops this process's leases. */
  release(): Promise<void>;
}

export async function acquireServers(): Promise<BenchServers> {
  const cfg = loadLocalConfig(process.env);
  const releases: Array<() => Promise<unknown>> = [];
  const givenBrokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
  let brokers = givenBrokers;
  if (brokers.length === 0) {
    brokers = (await acquireKafka(cfg, stderrLog)).brokers;
    releases.push(() => releaseKafka(cfg, false, stderrLog));
  }
  let registryUrl = process.env.SCHEMA_REGISTRY_URL ?? '';
  if (registryUrl === '') {
    registryUrl = (await acquireRegistry(cfg, stderrLog)).url;
    releases.push(() => releaseRegistry(cfg, false, stderrLog));
  }
  return {
    brokers,
    registryUrl,
    redisUrl: REDIS_URL,
    kafkaVersion:
      givenBrokers.length === 0 ? `Apache Kafka ${KAFKA_VERSION} (KRaft, local launcher)` : 'external Kafka',
    async release() {
      for (const release of releases.splice(0).reverse()) await release().catch(() => undefined);
    },
  };
}

/**
 * A benchmark's entry point ({@link runMain}): acquires the servers, runs `body` with them and
 * releases them whatever happened.
 */
export function runWithServers(body: (servers: BenchServers) => Promise<void>): void {
  runMain(async () => {
    const servers = await acquireServers();
    try {
      await body(servers);
    } finally {
      await servers.release();
    }
  });
}
