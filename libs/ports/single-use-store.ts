/** The answer to a consume: exactly one of any number of concurrent consumers of a fresh id gets `consumed`. */
export type ConsumeResult = 'consumed' | 'already-used';

/**
 * The ledger of single-use ids (preview tokens' `jti`): whether each was used (approvals are
 * requests of their own, in the `ApprovalStore`). Shared by every executor using the same backing
 * store; each method is one atomic step (one synchronous critical section, one Lua script, one SQL
 * statement), never a read-then-write.
 * Throws when the backing store is unreachable: callers fail closed (a token that cannot be marked
 * used is not honoured).
 */
export interface SingleUseStore {
  /**
   * Marks `id` used and remembers it for `ttlMs` (choose at least the token's remaining life: once
   * forgotten, the id can be consumed again). Exactly one of any number of concurrent consumers of a
   * fresh id gets `consumed`; every later one gets `already-used`.
   *
   * `holder` (optional) names the logical call that consumes, e.g. its idempotency key: the same
   * non-empty holder consuming again gets `consumed` again, so a retry of one logical call is not
   * refused by its own earlier attempt. Without a holder, or with another one, the answer is
   * `already-used`. Re-entry does not extend the ttl.
   */
  consume(id: string, ttlMs: number, holder?: string): Promise<ConsumeResult>;
}
