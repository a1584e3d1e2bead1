import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { z } from 'zod';
import { systemClock } from '../core/system-clock.js';
import type { Clock } from '../core/clock.js';
import {
  assertDeposit,
  DEFAULT_MAX_REFERENCE_TTL_MS,
  isTokenReference,
  newTokenReference,
  type DelegatedToken,
  type DepositOptions,
  type TokenReferenceMode,
  type TokenReferenceStore,
} from './token-reference-store.js';

/** Options of {@link RedisTokenReferenceStore}. */
export interface RedisTokenReferenceOptions {
  /** Prepended to every key (deployment or test namespace). */
  readonly keyPrefix?: string;
  readonly mode?: TokenReferenceMode;
  readonly maxTtlMs?: number;
  /** Stamps `expiresAtMs` on entries (Redis itself expires them). Default: the system clock. */
  readonly clock?: Clock;
}

const stored = z.object({
  token: z.string().min(1),
  tenant: z.string().min(1),
  subject: z.string().min(1),
  expiresAtMs: z.number(),
});

/**
 * The shared {@link TokenReferenceStore}: agent backends deposit, executors resolve, through one
 * Redis. Each reference is one key holding the entry as JSON with a Redis expiry (`SET … PX … NX`),
 * so an expired reference is gone from Redis itself, not only refused.
 *
 * - The key is the SHA-256 of the reference, so someone listing keys learns no usable reference.
 * - `once` mode resolves with `GETDEL`: of two concurrent resolves exactly one gets the token.
 * - Redis holds the user's token for at most the reference's lifetime; keep that Redis private (no
 *   persistence of this namespace, TLS and auth in production).
 */
export class RedisTokenReferenceStore implements TokenReferenceStore {
  readonly #redis: Redis | Cluster;
  readonly #prefix: string;
  readonly #mode: TokenReferenceMode;
  readonly #maxTtlMs: number;
  readonly #clock: Clock;

  constructor(redis: Redis | Cluster, options: RedisTokenReferenceOptions = {}) {
    this.#redis = redis;
    this.#prefix = options.keyPrefix ?? '';
    this.#mode = options.mode ?? 'ttl';
    this.#maxTtlMs = options.maxTtlMs ?? DEFAULT_MAX_REFERENCE_TTL_MS;
    this.#clock = options.clock ?? systemClock;
  }

  async put(token: string, options: DepositOptions): Promise<string> {
    assertDeposit(token, options, this.#maxTtlMs);
    const ttlMs = Math.ceil(options.ttlMs);
    for (;;) {
      const ref = newTokenReference();
      const entry: DelegatedToken = {
        token,
        tenant: options.tenant,
        subject: options.subject,
        expiresAtMs: this.#clock.now() + ttlMs,
      };
      const ok = await this.#redis.set(this.#key(ref), JSON.stringify(entry), 'PX', ttlMs, 'NX');
      // A collision of 256 random bits does not happen; NX just makes overwriting impossible.
      if (ok === 'OK') return ref;
    }
  }

  async resolve(ref: string): Promise<DelegatedToken | undefined> {
    if (!isTokenReference(ref)) return undefined;
    const key = this.#key(ref);
    const raw = this.#mode === 'once' ? await this.#redis.getdel(key) : await this.#redis.get(key);
    if (raw === null) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      return undefined;
    }
    const parsed = stored.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  }

  #key(ref: string): string {
    return `${this.#prefix}tref:${createHash('sha256').update(ref).digest('hex')}`;
  }
}
