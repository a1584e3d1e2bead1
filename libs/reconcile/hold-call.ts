import type { IdempotencyStore } from '../ports/idempotency-store.js';
import type { CaseRequest } from './case-request.js';

/**
 * What taking hold of a call's idempotency key before a person's resolution found:
 * - `held`: the key was free (an EXHAUSTED or POISON call releases it; so does an expired record);
 *   `owner` now holds it, so no executor can run the call (a re-run of the turn, a queued
 *   re-submission) until the resolution is recorded with `complete` — or `release`d if the case
 *   does not move;
 * - `recorded`: the key already has a completed record (an UNRESOLVED one the resolution settles,
 *   or the answer of a run that finished before the resolution); nothing is held;
 * - `running`: an executor is running the call right now (e.g. a re-submission): the outcome is
 *   about to change, so a person must not resolve it now;
 * - `untracked`: the call has no idempotency key, its fingerprint is unknown, or the key holds
 *   another call's fingerprint: nothing to hold or settle.
 */
export type CallHold =
  | { readonly kind: 'held'; readonly owner: string }
  | { readonly kind: 'recorded' }
  | { readonly kind: 'running'; readonly owner: string }
  | { readonly kind: 'untracked'; readonly why: string };

/**
 * Claims the call's idempotency key for `owner` (a person's resolution), with the call's own
 * argument fingerprint so a later re-run of the same turn matches the record. A lease taken over
 * from an executor that died counts as held: the person's verdict is what the record will say.
 * Safe to retry with the same `owner`. Rejects when the store is unreachable.
 */
export async function holdCall(
  idempotency: IdempotencyStore,
  request: CaseRequest,
  owner: string,
  leaseMs: number,
): Promise<CallHold> {
  if (request.idempotencyKey === '') return { kind: 'untracked', why: 'the call has no idempotency key' };
  if (request.argumentsFingerprint === undefined) {
    return { kind: 'untracked', why: "the call's argument fingerprint is unknown" };
  }
  const claim = await idempotency.claim(request.idempotencyKey, request.argumentsFingerprint, owner, leaseMs);
  switch (claim.kind) {
    case 'claimed':
    case 'taken-over':
      return { kind: 'held', owner };
    case 'completed':
      return { kind: 'recorded' };
    case 'in-flight':
      // Our own claim, when a retried claim's first answer was lost on the way back.
      return claim.owner === owner ? { kind: 'held', owner } : { kind: 'running', owner: claim.owner };
    case 'conflict':
      return { kind: 'untracked', why: 'the idempotency key holds another fingerprint' };
  }
}
