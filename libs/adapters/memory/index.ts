/** In-process adapters: the embedded default for the demo, a single executor and tests. */
export { MemoryIdempotencyStore } from './memory-idempotency-store.js';
export { MemoryRateLimiter } from './memory-rate-limiter.js';
export { DEFAULT_ABANDONED_RETENTION_MS, type IdempotencyStoreOptions } from './idempotency-options.js';
export { takeTokens, fullRefillMs, type BucketState } from './token-bucket.js';
export { MemoryAuditStore } from './audit-store.js';
export { MemoryCaseStore } from './case-store.js';
export { MemorySingleUseStore } from './single-use-store.js';
export { MemoryJobStore } from './job-store.js';
export { MemoryFactStore } from './memory-fact-store.js';
export { MemorySessionStore } from './session-store.js';
export { MemoryApprovalStore } from './approval-store.js';
