import { checkDurationMs, checkKey } from './argument-checks.js';

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

/** The configured abandoned retention (default 7 days) in whole ms; throws RangeError unless finite and > 0. */
export function abandonedRetentionMs(options: IdempotencyStoreOptions): number {
  return checkDurationMs(
    'abandonedRetentionMs',
    options.abandonedRetentionMs ?? DEFAULT_ABANDONED_RETENTION_MS,
  );
}

/**
 * The argument checks of `claim`, the same in every adapter: key, fingerprint and owner non-empty, the
 * lease finite and > 0. Returns the lease rounded up to a whole millisecond; throws RangeError.
 */
export function checkClaim(key: string, fingerprint: string, owner: string, leaseMs: number): number {
  checkKey('key', key);
  checkKey('fingerprint', fingerprint);
  checkKey('owner', owner);
  return checkDurationMs('leaseMs', leaseMs);
}

/** The argument checks of `complete`: key and owner non-empty, the ttl finite and > 0. Returns the ttl in whole ms. */
export function checkComplete(key: string, owner: string, ttlMs: number): number {
  checkKey('key', key);
  checkKey('owner', owner);
  return checkDurationMs('ttlMs', ttlMs);
}
