import { defineConfig } from 'vitest/config';

/**
 * Two projects: `unit` needs no servers; `integration` (real Kafka, schema registry, Postgres, Redis,
 * and the contract suites that run every adapter) gets its servers from test/global-setup.ts, which
 * starts Kafka and the registry when KAFKA_BROKERS / SCHEMA_REGISTRY_URL are not given and fails with
 * a how-to-start message when a server cannot be reached.
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
    ],
  },
});
