import type { Clock } from '../../core/clock.js';
import type {
  ClaimResult,
  IdempotencyStore,
  PeekResult,
  StoredResult,
} from '../../ports/idempotency-store.js';
import { checkDurationMs, checkKey } from './argument-checks.js';
import {
  abandonedRetentionMs,
  checkClaim,
  checkComplete,
  type IdempotencyStoreOptions,
} from './idempotency-options.js';
import { settle } from '../../core/settle.js';
import { deleteWhere } from './delete-where.js';

type MemoryRecord =
  | {
      readonly state: 'in-flight';
      readonly fingerprint: string;
      readonly owner: string;
      readonly leaseExpiresAtMs: number;
      readonly expiresAtMs: number;
    }
  | {
      readonly state: 'completed';
      readonly fingerprint: string;
      readonly stored: string;
      readonly expiresAtMs: number;
    };

/**
 * Idempotency records held in this process: the embedded default (demo, single executor, tests). It
 * does not survive a restart, so it protects against concurrent duplicates and redeliveries within
 * one process only; production uses the Redis or Postgres store.
 *
 * Each method body runs synchronously (no await inside), so a claim is one critical section and
 * exactly one of any number of concurrent claims of a fresh key is `claimed`. Stored results are
 * copied through JSON on `complete`, exactly like the Redis and Postgres stores, so a duplicate sees
 * the same value whichever adapter is wired (and later mutation of the caller's object cannot leak in).
 *
 * Ownership: the owner keeps the key until it completes or releases it, or until another claimant
 * takes it over after the lease ran out; an owner whose lease ran out may still complete or release
 * as long as nobody took over. A claim is not re-entrant: the holder claiming again is told
 * `in-flight` with itself as owner. The Redis and Postgres stores follow the same rules (one contract
 * suite runs all three).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, MemoryRecord>();
  private readonly abandonedRetentionMs: number;

  constructor(
    private readonly clock: Clock,
    options: IdempotencyStoreOptions = {},
  ) {
    this.abandonedRetentionMs = abandonedRetentionMs(options);
  }

  claim(key: string, fingerprint: string, owner: string, leaseMs: number): Promise<ClaimResult> {
    return settle(() => {
      const lease = checkClaim(key, fingerprint, owner, leaseMs);
      const now = this.clock.now();
      const record = this.live(key, now);
      const leaseExpiresAtMs = now + lease;
      const inFlight: MemoryRecord = {
        state: 'in-flight',
        fingerprint,
        owner,
        leaseExpiresAtMs,
        expiresAtMs: leaseExpiresAtMs + this.abandonedRetentionMs,
      };
      if (record === undefined) {
        this.records.set(key, inFlight);
        return { kind: 'claimed', leaseExpiresAtMs };
      }
      if (record.fingerprint !== fingerprint) {
        return { kind: 'conflict', storedFingerprint: record.fingerprint };
      }
      if (record.state === 'completed') {
        return { kind: 'completed', stored: JSON.parse(record.stored) as StoredResult };
      }
      if (record.leaseExpiresAtMs > now) {
        return { kind: 'in-flight', owner: record.owner, leaseExpiresAtMs: record.leaseExpiresAtMs };
      }
      this.records.set(key, inFlight);
      return { kind: 'taken-over', previousOwner: record.owner, leaseExpiresAtMs };
    });
  }

  complete(key: string, owner: string, stored: StoredResult, ttlMs: number): Promise<boolean> {
    return settle(() => {
      const ttl = checkComplete(key, owner, ttlMs);
      return this.replaceWithResult(
        key,
        stored,
        ttl,
        (record) => record.state === 'in-flight' && record.owner === owner,
      );
    });
  }

  release(key: string, owner: string): Promise<boolean> {
    return settle(() => {
      checkKey('key', key);
      checkKey('owner', owner);
      const record = this.live(key, this.clock.now());
      if (record?.state !== 'in-flight' || record.owner !== owner) return false;
      this.records.delete(key);
      return true;
    });
  }

  settle(key: string, stored: StoredResult, ttlMs: number): Promise<boolean> {
    return settle(() => {
      checkKey('key', key);
      const ttl = checkDurationMs('ttlMs', ttlMs);
      return this.replaceWithResult(
        key,
        stored,
        ttl,
        (record) => record.state === 'completed' && outcomeOf(record.stored) === 'UNRESOLVED',
      );
    });
  }

  /**
   * The live record of `key`, read without touching the map: an expired record is reported absent but
   * left for `claim` or {@link purgeExpired} to drop, so a peek never changes what is stored.
   */
  peek(key: string): Promise<PeekResult> {
    return settle(() => {
      checkKey('key', key);
      const now = this.clock.now();
      const record = this.records.get(key);
      if (record === undefined || record.expiresAtMs <= now) return { kind: 'absent' };
      if (record.state === 'completed') {
        return {
          kind: 'completed',
          fingerprint: record.fingerprint,
          stored: JSON.parse(record.stored) as StoredResult,
        };
      }
      return {
        kind: 'in-flight',
        fingerprint: record.fingerprint,
        owner: record.owner,
        leaseExpiresAtMs: record.leaseExpiresAtMs,
        leaseExpired: record.leaseExpiresAtMs <= now,
      };
    });
  }

  /**
   * When the live record for `key` passes `may`, replaces it with `stored` (copied through JSON, as the
   * server stores do) kept `ttl` ms, fingerprint unchanged, and returns true; otherwise writes nothing.
   * Synchronous, so it is one critical section with the check.
   */
  private replaceWithResult(
    key: string,
    stored: StoredResult,
    ttl: number,
    may: (record: MemoryRecord) => boolean,
  ): boolean {
    const serialized = JSON.stringify(stored);
    const now = this.clock.now();
    const record = this.live(key, now);
    if (record === undefined || !may(record)) return false;
    this.records.set(key, {
      state: 'completed',
      fingerprint: record.fingerprint,
      stored: serialized,
      expiresAtMs: now + ttl,
    });
    return true;
  }

  /** Drops every expired record (completed past its TTL, abandoned past retention); returns how many. */
  purgeExpired(): number {
    const now = this.clock.now();
    return deleteWhere(this.records, (record) => record.expiresAtMs <= now);
  }

  /** The record for `key` unless it has expired, in which case it is dropped and treated as absent. */
  private live(key: string, now: number): MemoryRecord | undefined {
    const record = this.records.get(key);
    if (record !== undefined && record.expiresAtMs <= now) {
      this.records.delete(key);
      return undefined;
    }
    return record;
  }
}

/** The outcome of a stored result's JSON text (written by complete/settle, so always an object). */
function outcomeOf(stored: string): unknown {
  return (JSON.parse(stored) as { outcome?: unknown }).outcome;
}
