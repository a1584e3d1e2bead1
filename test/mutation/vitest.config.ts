import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

/**
 * The tests a mutation run executes: the unit tests of the promise-carrying modules (listed in
 * stryker.config.json) and the contract suites that run the memory adapters among them. The test set
 * is limited here, not with Stryker's `testFiles` option: in Stryker 9.6.1 that option makes
 * module-level mutants take effect after the module was already loaded, so they look alive.
 *
 * The contract suites run against the memory adapters (see memory-store-harnesses.ts); the audit-store
 * suite also reaches the local Postgres (test/helpers/env.ts). Nothing here needs Kafka or the schema
 * registry, so this config has no global setup.
 */
export const mutationTestFiles = [
  'test/unit/adapters/memory-idempotency-store.test.ts',
  'test/unit/adapters/token-bucket.test.ts',
  'test/unit/audit/hash-chain.test.ts',
  'test/unit/audit/verify.test.ts',
  'test/unit/core/canonical-json.test.ts',
  'test/unit/core/classify.test.ts',
  'test/unit/core/idempotency-key.test.ts',
  'test/unit/guards/authorize.test.ts',
  'test/unit/guards/execute.test.ts',
  'test/unit/guards/status-check-protocol.test.ts',
  'test/unit/guards/idempotency.test.ts',
  'test/unit/guards/rate-limit.test.ts',
  'test/unit/guards/validate-output.test.ts',
  'test/unit/policy/policy-engine.test.ts',
  'test/contract/idempotency-store.contract.test.ts',
  'test/contract/rate-limiter.contract.test.ts',
  'test/contract/audit-store.contract.test.ts',
];

/**
 * A test file that fails to load under a mutant (the mutant throws while a module is imported) has
 * no test results, and the vitest runner of Stryker 9.6.1 reads "no failed test" as survived. This
 * reporter turns such a load failure into a run error, which Stryker records as a runtime error
 * (left out of the score) instead of a survivor.
 */
class LoadFailuresAsErrors implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(modules: readonly TestModule[]): void {
    for (const module of modules) {
      const failedToLoad = module.state() === 'failed' && [...module.children.allTests()].length === 0;
      if (!failedToLoad) continue;
      for (const error of module.errors()) {
        this.vitest?.state.catchError(error, 'Module load error under a mutant');
      }
    }
  }
}

/**
 * `TOOLGATE_MUTATION_TESTS` (comma-separated paths) narrows the set for a run of one file
 * (`stryker run --mutate <file>`); unset, every file above runs.
 */
const narrowed = process.env.TOOLGATE_MUTATION_TESTS?.split(',').filter((path) => path.length > 0);

const source = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: source('../..'),
  resolve: {
    // The contract suites import './store-harnesses.js'; memory-store-harnesses.ts imports the real
    // module by another path, so it is not caught by this alias itself.
    alias: [{ find: /^\.\/store-harnesses\.js$/, replacement: source('./memory-store-harnesses.ts') }],
  },
  test: {
    include: narrowed ?? mutationTestFiles,
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', new LoadFailuresAsErrors()],
  },
});
