import type { Clock } from '../../core/clock.js';
import type { ConsumeResult, SingleUseStore } from '../../ports/single-use-store.js';
import { checkDurationMs, checkKey } from './argument-checks.js';
import { deleteWhere } from './delete-where.js';

interface Entry<T> {
  readonly value: T;
  readonly expiresAtMs: number;
}

/**
 * Single-use ids in process memory, timed by `clock` (embedded mode, one executor, tests). Every
 * method runs synchronously to completion before its promise settles, so no two calls interleave:
 * that is what makes consume atomic here. Expired entries are dropped lazily when touched and by
 * {@link MemorySingleUseStore.purgeExpired}. See {@link SingleUseStore} for the contract.
 */
export class MemorySingleUseStore implements SingleUseStore {
  readonly #consumed = new Map<string, Entry<string>>();

  constructor(private readonly clock: Clock) {}

  async consume(id: string, ttlMs: number, holder = ''): Promise<ConsumeResult> {
    checkKey('id', id);
    const ttl = checkDurationMs('ttlMs', ttlMs);
    const live = this.#live(this.#consumed, id);
    if (live !== undefined) return holder !== '' && live === holder ? 'consumed' : 'already-used';
    this.#consumed.set(id, { value: holder, expiresAtMs: this.clock.now() + ttl });
    return 'consumed';
  }

  /** Drops every expired entry; returns how many were dropped. */
  purgeExpired(): number {
    const now = this.clock.now();
    const expired = (entry: Entry<unknown>): boolean => entry.expiresAtMs <= now;
    return deleteWhere(this.#consumed, expired);
  }

  #live<T>(map: Map<string, Entry<T>>, id: string): T | undefined {
    const entry = map.get(id);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs <= this.clock.now()) {
      map.delete(id);
      return undefined;
    }
    return entry.value;
  }
}
