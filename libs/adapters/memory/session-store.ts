import type { Clock } from '../../core/clock.js';
import type { SessionStore } from '../../ports/session-store.js';
import { checkDurationMs, checkKey } from './argument-checks.js';

/**
 * Session records in process memory, timed by `clock` (one console, tests). Every method runs
 * synchronously to completion before its promise settles, so `take` is atomic here. Expired entries
 * are dropped when touched. See {@link SessionStore} for the contract.
 */
export class MemorySessionStore implements SessionStore {
  readonly #entries = new Map<string, { readonly value: string; readonly expiresAtMs: number }>();

  constructor(private readonly clock: Clock) {}

  async put(id: string, value: string, ttlMs: number): Promise<void> {
    checkKey('id', id);
    const ttl = checkDurationMs('ttlMs', ttlMs);
    this.#entries.set(id, { value, expiresAtMs: this.clock.now() + ttl });
  }

  async get(id: string): Promise<string | undefined> {
    checkKey('id', id);
    return this.#live(id);
  }

  async take(id: string): Promise<string | undefined> {
    checkKey('id', id);
    const value = this.#live(id);
    this.#entries.delete(id);
    return value;
  }

  async delete(id: string): Promise<boolean> {
    checkKey('id', id);
    const had = this.#live(id) !== undefined;
    this.#entries.delete(id);
    return had;
  }

  #live(id: string): string | undefined {
    const entry = this.#entries.get(id);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs <= this.clock.now()) {
      this.#entries.delete(id);
      return undefined;
    }
    return entry.value;
  }
}
