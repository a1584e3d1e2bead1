/** Postgres adapters and the schema migration runner. Run `migrate(pool)` before using the stores. */
export { migrate, type MigrateOptions, type MigrateResult } from './migrate.js';
export { readMigrationFiles, defaultMigrationsDirectory, type MigrationFile } from './migration-files.js';
export { PostgresIdempotencyStore } from './postgres-idempotency-store.js';
export { PostgresRateLimiter } from './postgres-rate-limiter.js';
export { PostgresAuditStore, type PostgresAuditStoreOptions } from './audit-store.js';
export { PostgresCaseStore } from './case-store.js';
export { PostgresSingleUseStore } from './single-use-store.js';
export { PostgresJobStore } from './job-store.js';
export { PostgresApprovalStore } from './approval-store.js';
