import type { ErrorCode } from '../core/errors.js';
import type { Outcome } from '../core/outcome.js';
import type { AuditRecord } from '../core/audit-record.js';

/**
 * Who wrote an audit record: the executor for pipeline runs, the reconciler or a person for
 * resolutions, the MCP gateway for the MCP requests it served.
 */
export const AUDIT_SOURCES = ['executor', 'reconciler', 'operator', 'mcp-gateway'] as const;
export type AuditSource = (typeof AUDIT_SOURCES)[number];

/**
 * One audit record as handed to the store: the attempt's {@link AuditRecord} plus who produced it.
 * `recordId` is unique per attempt (e.g. `${callId}:${attemptId}`, or a uuid set by the producer) and
 * is the store's idempotency key: the same envelope delivered twice is stored once.
 */
export interface AuditEnvelope {
  readonly recordId: string;
  /** The executor instance (or reconciler / operator tool) that produced the record. */
  readonly producerId: string;
  readonly source: AuditSource;
  /** When the producer recorded it, epoch ms. Queries filter and order on this time. */
  readonly recordedAtMs: number;
  readonly record: AuditRecord;
}

/**
 * A record as stored: the envelope, its place in its chain and the chain hashes. One chain per tenant
 * (`chain` = the record's tenant). `hash = sha256hex(prevHash + canonicalJson(content))` where the
 * content is the envelope plus `chain` and `seq` (libs/audit/hash-chain.ts); the first record of a
 * chain has seq 1 and a `prevHash` of 64 zeros.
 */
export interface StoredAuditRecord extends AuditEnvelope {
  readonly chain: string;
  /** 1, 2, 3, … without gaps within a chain, in append order. */
  readonly seq: number;
  readonly prevHash: string;
  readonly hash: string;
}

/** Filters for {@link AuditStore.query}; all given fields must match (AND). */
export interface AuditQuery {
  readonly tool?: string;
  readonly principalId?: string;
  readonly tenant?: string;
  /**
   * Only records of one of these tenants (an operator's tenant scope); an empty list matches nothing.
   * Combines with `tenant` (both must hold).
   */
  readonly tenants?: readonly string[];
  /** The full resource key, e.g. `t1:order:O-5512`. */
  readonly resourceKey?: string;
  readonly callId?: string;
  readonly traceId?: string;
  readonly outcome?: Outcome;
  /** Who produced the record: the executor, the reconciler, a person through the ops tools, or the MCP gateway. */
  readonly source?: AuditSource;
  /** Inclusive lower bound on `recordedAtMs`. */
  readonly fromMs?: number;
  /** Exclusive upper bound on `recordedAtMs`. */
  readonly toMs?: number;
  /** Records to skip, in the query's order, before the first returned (paging); default 0, at most 1 000 000. */
  readonly offset?: number;
  /** Default 100, at most 10 000. */
  readonly limit?: number;
  /** By `recordedAtMs`, then chain, then seq. Default 'asc'. */
  readonly order?: 'asc' | 'desc';
}

/** Pins a chain's content up to `seq`: the stored record at `seq` must have exactly this hash. */
export interface ChainAnchor {
  readonly chain: string;
  readonly seq: number;
  readonly hash: string;
}

export interface VerifyOptions {
  /** Verify only this chain (a tenant). Default: every chain, in name order. */
  readonly chain?: string;
  /**
   * Heads recorded earlier (from an ok report's `heads`, kept outside the database). Without them,
   * someone able to rewrite a record AND every later hash, or to delete the newest records, leaves a
   * chain that is consistent in itself; an anchor makes that visible.
   */
  readonly anchors?: readonly ChainAnchor[];
  /**
   * Called after each page of records is checked, with the chain being walked and the records
   * checked so far over all chains (a long verify can then report progress). Must not throw.
   */
  readonly onProgress?: (progress: VerifyProgress) => void;
}

/** How far a running {@link AuditStore.verify} has got. */
export interface VerifyProgress {
  readonly chain: string;
  /** Records checked so far, over every chain verified in this run. */
  readonly checked: number;
}

/** Why a link is broken. */
export type BrokenLinkReason =
  /** A seq is missing (a record was deleted) or out of order. */
  | 'seq-gap'
  /** `prevHash` differs from the previous record's `hash` (that record or this link was rewritten). */
  | 'prev-hash-mismatch'
  /** The stored content no longer hashes to the stored `hash` (the record was edited). */
  | 'hash-mismatch'
  /** An indexed column disagrees with the hashed body (a column was edited to mislead queries). */
  | 'column-mismatch'
  /** The record at an anchor's seq has another hash, or the anchored seq no longer exists. */
  | 'anchor-mismatch';

/** The head (last record) of a verified chain, suitable as a later {@link ChainAnchor}. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

export type VerifyReport =
  | {
      readonly ok: true;
      /** Records checked. */
      readonly checked: number;
      readonly heads: Readonly<Record<string, ChainHead>>;
    }
  | {
      readonly ok: false;
      /** Records checked up to and including the broken one. */
      readonly checked: number;
      readonly chain: string;
      /** The first seq (in chain order) whose link does not hold. */
      readonly firstBrokenSeq: number;
      readonly reason: BrokenLinkReason;
      /** A short human-readable account for the ops CLI. */
      readonly detail: string;
    };

/**
 * What {@link AuditStore.whoDid} is asked about: a full resource key (`t1:order:O-5512`), or a tool
 * and the resource's own id (the part of the key after `<tenant>:<kind>:`, e.g. `O-5512`).
 */
export type WhoDidTarget = string | { readonly tool: string; readonly resource: string };

/**
 * How an attempt on a resource ended, from the point of view of "who did it":
 * - `did`: the tool ran and succeeded (SUCCESS): this principal caused the effect.
 * - `duplicate`: answered with an earlier attempt's result (DUPLICATE); no new effect.
 * - `refused`: stopped before the tool was reached (UNKNOWN_TOOL, SCHEMA_INVALID, UNAUTHORIZED,
 *   RATE_LIMITED, POLICY_VIOLATION).
 * - `failed`: the tool was reached and did not apply its effect (EXECUTION_ERROR).
 * - `unresolved`: the effect may or may not have happened (UNRESOLVED); see the reconciliation case.
 */
export type AttemptLabel = 'did' | 'duplicate' | 'refused' | 'failed' | 'unresolved';

/** One row of a {@link WhoDidAnswer}. */
export interface WhoDidEntry {
  readonly label: AttemptLabel;
  readonly principalId: string;
  readonly tenant: string;
  readonly tool: string;
  readonly outcome: Outcome;
  readonly errorCode?: ErrorCode;
  /** The refusing or short-circuiting stage's reason, when there was one. */
  readonly reason?: string;
  readonly stage?: string;
  readonly atMs: number;
  readonly traceId: string;
  readonly callId: string;
  readonly resourceKey: string;
  readonly recordId: string;
  readonly chain: string;
  readonly seq: number;
}

/** "Who refunded O-5512, and who tried to?": successes and everything else, each oldest first. */
export interface WhoDidAnswer {
  readonly did: readonly WhoDidEntry[];
  readonly tried: readonly WhoDidEntry[];
}

export interface WhoDidOptions {
  readonly tenant?: string;
  /** Only records of one of these tenants, as {@link AuditQuery.tenants}. */
  readonly tenants?: readonly string[];
  readonly fromMs?: number;
  readonly toMs?: number;
  /** Rows over both lists, oldest first. Default 100, at most 10 000. */
  readonly limit?: number;
}

/**
 * The append-only, hash-chained audit log. There is deliberately no update
 * or delete. Throws when the backing store is unreachable; callers (the audit sink) retry, which is
 * safe because `append` is idempotent.
 */
export interface AuditStore {
  /**
   * Appends records, each to the chain of its tenant, in the order given. Idempotent by `recordId`:
   * a record already stored (or repeated within the call) is counted in `duplicates` and not stored
   * again, and the first stored version wins. Appends to one chain serialize, so concurrent appenders
   * (several audit-sink processes) never fork a chain or leave a seq gap. Each chain's part of the
   * batch is atomic; different chains are committed separately, so after a failure the caller retries
   * the whole batch and the committed part comes back as duplicates. Refuses the whole batch, before
   * writing anything, when an envelope is malformed (ToolgateError MALFORMED_EVENT / SCHEMA_INVALID).
   * Strings are stored as well-formed text: U+0000 and lone surrogates become U+FFFD (PostgreSQL text
   * cannot hold them), and the hash covers the stored form.
   */
  append(records: readonly AuditEnvelope[]): Promise<{ appended: number; duplicates: number }>;
  /** Records matching every given filter, ordered by `recordedAtMs`, chain, seq. */
  query(filter: AuditQuery): Promise<StoredAuditRecord[]>;
  /**
   * Re-computes every link and reports the FIRST broken one (chains in name order, seqs ascending).
   * Reads in pages; safe to run while appends continue (records appended meanwhile may or may not be
   * included).
   */
  verify(opts?: VerifyOptions): Promise<VerifyReport>;
  /**
   * Every attempt on one resource, in ONE query, split into `did` (the tool succeeded) and `tried`
   * (refused, failed, unresolved, duplicate), each with principal, outcome, reason, time and trace id.
   * Finds only records that carry the resource key: the executor must set `record.resourceKey` for
   * refused attempts too (it is known from the call's partition key before any stage runs).
   */
  whoDid(target: WhoDidTarget, opts?: WhoDidOptions): Promise<WhoDidAnswer>;
}
