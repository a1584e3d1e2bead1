/** How long an abandoned in-flight marker is kept after its lease, unless configured otherwise. */
export const DEFAULT_ABANDONED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** Options shared by every idempotency-store adapter (memory, Redis, Postgres). */
export interface IdempotencyStoreOptions {
  /**
   * How long an in-flight marker whose owner never completed nor released (a crash) is remembered
   * after its lease ran out. Within that window a new claim answers `taken-over`, so the caller takes
   * the safe path; after it the key is forgotten and a claim answers `claimed`. It bounds storage for
   * crashed calls that are never retried. Default 7 days: longer than any realistic redelivery window.
   */
  readonly abandonedRetentionMs?: number;
}
