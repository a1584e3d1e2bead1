import { randomBytes } from 'node:crypto';

/** What a reference stands for: the user's token and whom it was deposited for. */
export interface DelegatedToken {
  readonly token: string;
  readonly tenant: string;
  /** The end user the token belongs to (the principal's `onBehalfOf`, or its id for a user). */
  readonly subject: string;
  readonly expiresAtMs: number;
}

/** Whom a deposited token is bound to, and for how long. */
export interface DepositOptions {
  /** Lifetime of the reference; keep it to one agent task. Must be > 0 and ≤ the store's maximum. */
  readonly ttlMs: number;
  readonly tenant: string;
  readonly subject: string;
}

/**
 * Keeps end users' own tokens out of Kafka: the agent backend
 * deposits the token and receives an opaque reference, which is all that travels with the call (in
 * the signed principal's `delegationRef`); the executor-side tool resolves the reference just before
 * calling the downstream.
 *
 * Contract:
 * - `put` returns a fresh, unguessable reference (`tref_` + 43 base64url characters, 256 bits).
 * - `resolve` answers the deposited token until `ttlMs` after `put`, then undefined — as it does for
 *   a reference never issued or malformed. In one-time mode (`once`), the first `resolve` consumes
 *   the reference: later ones answer undefined (use it only for tools that never retry).
 * - Both throw only when the backing store is unreachable.
 */
export interface TokenReferenceStore {
  put(token: string, options: DepositOptions): Promise<string>;
  resolve(ref: string): Promise<DelegatedToken | undefined>;
}

/** `ttl`: resolvable any number of times until expiry. `once`: the first resolve consumes it. */
export type TokenReferenceMode = 'ttl' | 'once';

/** Longest lifetime a reference may have unless a store is configured otherwise: 15 minutes. */
export const DEFAULT_MAX_REFERENCE_TTL_MS = 15 * 60_000;

const REF_PATTERN = /^tref_[A-Za-z0-9_-]{43}$/;

/** A new reference. */
export function newTokenReference(): string {
  return `tref_${randomBytes(32).toString('base64url')}`;
}

/** Whether `ref` has the shape of a reference (cheap check before asking a store). */
export function isTokenReference(ref: unknown): ref is string {
  return typeof ref === 'string' && REF_PATTERN.test(ref);
}

/** Throws RangeError for a deposit the store must refuse (empty token or ids, bad lifetime). */
export function assertDeposit(token: string, options: DepositOptions, maxTtlMs: number): void {
  if (typeof token !== 'string' || token.length === 0) throw new RangeError('the token is empty');
  if (options.tenant.length === 0 || options.subject.length === 0) {
    throw new RangeError('a deposit needs a tenant and a subject');
  }
  if (!Number.isFinite(options.ttlMs) || options.ttlMs <= 0 || options.ttlMs > maxTtlMs) {
    throw new RangeError(`ttlMs must be in (0, ${maxTtlMs}]`);
  }
}
