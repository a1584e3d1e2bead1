import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The package's own import names, resolved to the sources: a test (e.g. one that runs a README
 * example as written) imports `toolgate/embedded` exactly as a user does. The packed package is
 * tested separately, from a project that installs the tarball.
 */
const source = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const packageAliases = [
  { find: /^toolgate$/, replacement: source('./libs/index.ts') },
  { find: /^toolgate\/sdk$/, replacement: source('./services/sdk/index.ts') },
  { find: /^toolgate\/embedded$/, replacement: source('./services/embedded/index.ts') },
  { find: /^toolgate\/executor$/, replacement: source('./services/executor/public.ts') },
  { find: /^toolgate\/testing$/, replacement: source('./services/embedded/testing.ts') },
];

/**
 * Three projects: `unit` needs no servers; `integration` (real Kafka, schema registry, Postgres, Redis,
 * and the contract suites that run every adapter) gets its servers from test/global-setup.ts, which
 * starts Kafka and the registry when KAFKA_BROKERS / SCHEMA_REGISTRY_URL are not given and fails with
 * a how-to-start message when a server cannot be reached. `chaos` (test/chaos) is the fault-injection
 * suite on the same servers: CI sizes by default, TOOLGATE_CHAOS_SCALE=full for the full ones.
 */
export default defineConfig({
  resolve: { alias: packageAliases },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          // Some unit tests are CPU-heavy: property tests (hundreds of generated cases), tests that
          // build policy engines or verify signatures by the hundred. The labels property test in
          // metrics.test.ts takes 0.8 s of CPU; on a 2-core host at a load average of 20 to 30, where a
          // test's process gets a tenth of a core or less, that is 8 to 12 s, past vitest's 5 s default.
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
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
        extends: true,
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
