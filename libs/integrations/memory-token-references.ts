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

/** Options of {@link MemoryTokenReferenceStore}. */
export interface MemoryTokenReferenceOptions {
  readonly clock: Clock;
  readonly mode?: TokenReferenceMode;
  readonly maxTtlMs?: number;
}

/**
 * The in-process {@link TokenReferenceStore} (embedded mode, tests): one process deposits and
 * resolves. Expiry follows the injected clock; expired entries are dropped on the next `put`.
 */
export class MemoryTokenReferenceStore implements TokenReferenceStore {
  readonly #clock: Clock;
  readonly #mode: TokenReferenceMode;
  readonly #maxTtlMs: number;
  readonly #entries = new Map<string, DelegatedToken>();

  constructor(options: MemoryTokenReferenceOptions) {
    this.#clock = options.clock;
    this.#mode = options.mode ?? 'ttl';
    this.#maxTtlMs = options.maxTtlMs ?? DEFAULT_MAX_REFERENCE_TTL_MS;
  }

  async put(token: string, options: DepositOptions): Promise<string> {
    assertDeposit(token, options, this.#maxTtlMs);
    const now = this.#clock.now();
    for (const [ref, entry] of this.#entries) if (entry.expiresAtMs <= now) this.#entries.delete(ref);
    const ref = newTokenReference();
    this.#entries.set(ref, {
      token,
      tenant: options.tenant,
      subject: options.subject,
      expiresAtMs: now + options.ttlMs,
    });
    return ref;
  }

  async resolve(ref: string): Promise<DelegatedToken | undefined> {
    if (!isTokenReference(ref)) return undefined;
    const entry = this.#entries.get(ref);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs <= this.#clock.now()) {
      this.#entries.delete(ref);
      return undefined;
    }
    if (this.#mode === 'once') this.#entries.delete(ref);
    return entry;
  }
}
