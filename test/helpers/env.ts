import { inject } from 'vitest';

/**
 * Where the integration servers are. Postgres and Redis default to this machine's local servers;
 * Kafka and the schema registry come from the global setup (which starts them when not given).
 */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string[];
    schemaRegistryUrl: string;
    redisClusterNodes: string[];
    kafkaClusterBrokers: string[];
  }
}

/** Kafka bootstrap brokers, as provided by test/global-setup.ts. */
export function kafkaBrokers(): string[] {
  return inject('kafkaBrokers');
}

/** Confluent-compatible schema registry base URL, as provided by test/global-setup.ts. */
export function schemaRegistryUrl(): string {
  return inject('schemaRegistryUrl');
}

/** Seed nodes (`host:port`) of the test Redis Cluster, as provided by test/global-setup.ts. */
export function redisClusterNodes(): string[] {
  return inject('redisClusterNodes');
}

/** Brokers of the test Kafka cluster (three nodes, replication factor 3), as provided by test/global-setup.ts. */
export function kafkaClusterBrokers(): string[] {
  return inject('kafkaClusterBrokers');
}
