/**
 * Short-lived records kept on the server under random ids: the ops console's sign-in sessions and
 * its sign-ins in progress. Values are opaque text (the caller serialises and checks them). Every
 * method is one atomic step of the backing store. Throws when the store is unreachable: callers fail
 * closed (no record read means no session).
 */
export interface SessionStore {
  /** Stores `value` under `id` for `ttlMs`, replacing any earlier value and its expiry. */
  put(id: string, value: string, ttlMs: number): Promise<void>;
  /** The live value of `id`, or undefined when none was stored, it expired, or it was removed. */
  get(id: string): Promise<string | undefined>;
  /**
   * Reads and removes `id` in one step: of any number of concurrent takers exactly one gets the
   * value, the others undefined (a sign-in in progress is finished once).
   */
  take(id: string): Promise<string | undefined>;
  /** Removes `id`; resolves with whether a live value was removed. Idempotent. */
  delete(id: string): Promise<boolean>;
}
