/**
 * What a completed call left behind: enough to answer a duplicate with the original result.
 * `result` is the already-redacted result (never raw tool output).
 */
export interface StoredResult {
  readonly outcome: string;
  readonly result: unknown;
  readonly completedAtMs: number;
}

/** The answer to a claim. Exactly one concurrent claimant of a fresh key receives `claimed`. */
export type ClaimResult =
  /** The caller now owns the key until `leaseExpiresAtMs`; it must `complete` or `release` it. */
  | { readonly kind: 'claimed'; readonly leaseExpiresAtMs: number }
  /** The call already finished; return the stored result and do not execute. */
  | { readonly kind: 'completed'; readonly stored: StoredResult }
  /** Another owner holds a live lease: the call is running elsewhere right now. */
  | { readonly kind: 'in-flight'; readonly owner: string; readonly leaseExpiresAtMs: number }
  /**
   * A previous owner's lease expired without completing (it crashed mid-call). The caller now owns
   * the key, but the effect may already have happened: it must take the tool's safe path
   * (forward the key / status check) or report UNRESOLVED — never simply run the tool again.
   */
  | { readonly kind: 'taken-over'; readonly previousOwner: string; readonly leaseExpiresAtMs: number }
  /** Same key, different argument fingerprint: a caller bug, refused. */
  | { readonly kind: 'conflict'; readonly storedFingerprint: string };

/**
 * What a key's record holds right now, read without changing it (see {@link IdempotencyStore.peek}).
 * Every variant but `absent` carries the argument fingerprint, so a reader can tell whether the
 * record belongs to the call it has in mind (the same test `claim` makes to answer `conflict`).
 */
export type PeekResult =
  /** No live record: never claimed, released, completed past its TTL, or abandoned past retention. */
  | { readonly kind: 'absent' }
  /**
   * Claimed and not finished. `leaseExpired` is judged on the store's clock (as `claim` judges it):
   * true means the owner's lease ran out without complete or release, so the next claim would be
   * `taken-over`; false means the call is running at `owner` right now.
   */
  | {
      readonly kind: 'in-flight';
      readonly fingerprint: string;
      readonly owner: string;
      readonly leaseExpiresAtMs: number;
      readonly leaseExpired: boolean;
    }
  /** Finished: the stored result, exactly as a `completed` claim would return it. */
  | { readonly kind: 'completed'; readonly fingerprint: string; readonly stored: StoredResult };

/**
 * Idempotency claims: at most one owner per key at a time, atomically (no lookup-then-write race).
 * Implementations must make `claim` a single atomic step (Lua script, SQL upsert, or one
 * synchronous critical section). Throws when the backing store is unreachable; callers fail closed.
 */
export interface IdempotencyStore {
  /** Claim `key` for `owner` with a lease of `leaseMs`, remembering the argument `fingerprint`. */
  claim(key: string, fingerprint: string, owner: string, leaseMs: number): Promise<ClaimResult>;
  /**
   * Record the final result. Only the current owner may complete; returns false (and writes nothing)
   * when `owner` no longer holds the key. Completed records live for `ttlMs`.
   */
  complete(key: string, owner: string, stored: StoredResult, ttlMs: number): Promise<boolean>;
  /**
   * Give up the claim because the effect definitely did not happen (refused downstream, caller
   * error), so a later retry may run. Only the owner may release; returns whether it did.
   */
  release(key: string, owner: string): Promise<boolean>;
  /**
   * Replaces the answer of a call that was completed as UNRESOLVED with its reconciled outcome (the
   * reconciler's status check or a person found out whether the effect happened), so later
   * duplicates get the settled answer instead of "unknown". Writes only when the live record is
   * completed with outcome 'UNRESOLVED'; an in-flight, absent (or expired) record, or one completed
   * with any other outcome, is left untouched and the call returns false. The fingerprint stays, and
   * the record then lives for `ttlMs` from now. Needs no ownership: the owner finished long ago.
   * Idempotent in effect: settling again finds the record no longer UNRESOLVED and returns false.
   */
  settle(key: string, stored: StoredResult, ttlMs: number): Promise<boolean>;
  /**
   * Reads the live record of `key` without writing anything: no lease is taken, no expiry is moved,
   * nothing is created, so a `claim` after a peek answers exactly as it would have without it. For
   * readers that must not stand in an owner's way (deciding whether an unverified call may have run,
   * or whether a re-submitted call has been answered). A record past its TTL or retention is
   * `absent`, as it is to `claim`. Throws RangeError for an empty key, and when the store is
   * unreachable. One read: the answer may be stale by the time the caller acts on it.
   */
  peek(key: string): Promise<PeekResult>;
}
