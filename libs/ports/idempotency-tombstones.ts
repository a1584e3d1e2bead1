/**
 * Tombstones of idempotency keys: a mark that a key was claimed, kept longer than the key's record
 * (the retention), so a claim recreated for a key whose record has expired can be told apart from a
 * fresh one. They only make the retention bound visible; nothing is decided on them (a call whose
 * record expired runs again either way). One small value per claimed key, for the tombstone's ttl.
 */
export interface IdempotencyTombstones {
  /**
   * Marks `key` for `ttlMs` (renewing an existing mark) and resolves whether it was already marked,
   * in one atomic step. Throws when the store is unreachable.
   */
  mark(key: string, ttlMs: number): Promise<boolean>;
  /**
   * Removes the mark: the key's claim was released because its effect definitely did not happen,
   * so its next claim is a first run, not a repeat. Throws when the store is unreachable.
   */
  clear(key: string): Promise<void>;
}
