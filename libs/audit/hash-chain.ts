import { canonicalJson, sha256Hex } from '../core/canonical-json.js';
import type { AuditEnvelope, ChainHead, StoredAuditRecord } from '../ports/audit-store.js';
import { chainOf } from './columns.js';

/** The `prevHash` of a chain's first record (seq 1). */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * Version of the hashed-content layout. It is inside every hash, so a future layout can be told
 * apart from this one and old records still verify.
 */
export const CHAIN_FORMAT = 1;

/** Exactly what a link's hash covers: the envelope, its chain and its seq. */
export interface HashedContent {
  readonly v: typeof CHAIN_FORMAT;
  readonly chain: string;
  readonly seq: number;
  readonly recordId: string;
  readonly producerId: string;
  readonly source: string;
  readonly recordedAtMs: number;
  readonly record: unknown;
}

/** The content of the link at `seq` of `chain` holding `envelope`. */
export function hashedContent(envelope: AuditEnvelope, chain: string, seq: number): HashedContent {
  return {
    v: CHAIN_FORMAT,
    chain,
    seq,
    recordId: envelope.recordId,
    producerId: envelope.producerId,
    source: envelope.source,
    recordedAtMs: envelope.recordedAtMs,
    record: envelope.record,
  };
}

/**
 * `sha256hex(prevHash + canonicalJson(content))`. `prevHash` is always 64 hex characters, so the
 * concatenation is unambiguous. Deterministic across processes and key orders (RFC 8785).
 */
export function linkHash(prevHash: string, content: HashedContent): string {
  return sha256Hex(prevHash + canonicalJson(content));
}

/**
 * Links `envelopes` (already in stored form, see prepareEnvelope, all of the same chain) onto a chain
 * whose current head is `head` (undefined for an empty chain), in the order given. Pure: the caller
 * must hold the chain's append lock from reading `head` until the returned records are stored.
 */
export function linkRecords(
  chain: string,
  head: ChainHead | undefined,
  envelopes: readonly AuditEnvelope[],
): StoredAuditRecord[] {
  let seq = head?.seq ?? 0;
  let prevHash = head?.hash ?? GENESIS_HASH;
  const out: StoredAuditRecord[] = [];
  for (const envelope of envelopes) {
    if (chainOf(envelope.record) !== chain) {
      throw new Error(
        `record ${envelope.recordId} belongs to chain ${chainOf(envelope.record)}, not ${chain}`,
      );
    }
    seq += 1;
    const hash = linkHash(prevHash, hashedContent(envelope, chain, seq));
    out.push({ ...envelope, chain, seq, prevHash, hash });
    prevHash = hash;
  }
  return out;
}

/**
 * Groups prepared envelopes by chain, keeping their order within each chain, and drops repeated
 * recordIds (first occurrence wins). Returns the groups in chain-name order, so two appenders that
 * both touch several chains take the chains' locks in the same order and cannot deadlock.
 */
export function groupByChain(envelopes: readonly AuditEnvelope[]): {
  groups: Map<string, AuditEnvelope[]>;
  repeated: number;
} {
  const seen = new Set<string>();
  const byChain = new Map<string, AuditEnvelope[]>();
  let repeated = 0;
  for (const envelope of envelopes) {
    if (seen.has(envelope.recordId)) {
      repeated += 1;
      continue;
    }
    seen.add(envelope.recordId);
    const chain = chainOf(envelope.record);
    const group = byChain.get(chain);
    if (group === undefined) byChain.set(chain, [envelope]);
    else group.push(envelope);
  }
  const groups = new Map([...byChain.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { groups, repeated };
}
