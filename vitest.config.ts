import { defineConfig } from 'vitest/config';

/**
 * Three projects: `unit` needs no servers; `integration` (real Kafka, schema registry, Postgres, Redis,
 * and the contract suites that run every adapter) gets its servers from test/global-setup.ts, which
 * starts Kafka and the registry when KAFKA_BROKERS / SCHEMA_REGISTRY_URL are not given and fails with
 * a how-to-start message when a server cannot be reached. `chaos` (test/chaos) is the fault-injection
 * suite on the same servers: CI sizes by default, TOOLGATE_CHAOS_SCALE=full for the full ones.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/contract/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
        },
      },
      {
        test: {
          name: 'chaos',
          include: ['test/chaos/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 180_000,
          pool: 'forks',
          // The scenarios start and kill processes and servers: one file at a time on a small machine.
          fileParallelism: false,
        },
      },
    ],
  },
});
