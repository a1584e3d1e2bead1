/**
 * The store harnesses as the mutation runs see them: the contract suites run against the memory
 * adapters only. Those are the adapters under mutation; the Redis and Postgres variants cover none of
 * the mutated code and wait out real leases and TTLs, so they would only slow every mutant that has
 * to run the whole test set (module-level code). They keep running in the integration project.
 * test/mutation/vitest.config.ts puts this module in place of test/contract/store-harnesses.ts.
 */
import {
  idempotencyStoreAdapters as allIdempotencyStoreAdapters,
  rateLimiterAdapters as allRateLimiterAdapters,
} from '../contract/store-harnesses.js';

export * from '../contract/store-harnesses.js';

export const idempotencyStoreAdapters = allIdempotencyStoreAdapters.filter((a) => a.name === 'memory');
export const rateLimiterAdapters = allRateLimiterAdapters.filter((a) => a.name === 'memory');
