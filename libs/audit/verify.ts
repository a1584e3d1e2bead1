import type {
  BrokenLinkReason,
  ChainAnchor,
  ChainHead,
  StoredAuditRecord,
  VerifyProgress,
  VerifyReport,
} from '../ports/audit-store.js';
import { differingColumns, indexedColumns, type IndexedColumns } from './columns.js';
import { GENESIS_HASH, hashedContent, linkHash } from './hash-chain.js';

/** A stored record as read back, with the indexed columns exactly as the store holds them. */
export interface VerifiableRecord extends StoredAuditRecord {
  readonly columns: IndexedColumns;
}

/** The first broken link of one chain. */
export interface BrokenLink {
  readonly chain: string;
  readonly firstBrokenSeq: number;
  readonly reason: BrokenLinkReason;
  readonly detail: string;
}

/**
 * Walks one chain in seq order, one record at a time, so a store can feed it page by page without
 * holding the chain in memory. Checks, per record, in this order: the seq is the next one (no gap),
 * `prevHash` is the previous record's hash (genesis for seq 1), the content re-hashes to `hash`, the
 * indexed columns match the body, and an anchor at this seq (if any) has this hash. The first failure
 * is final: later calls return it again.
 */
export class ChainVerifier {
  private expectedSeq = 1;
  private prevHash = GENESIS_HASH;
  private broken: BrokenLink | undefined;
  private readonly anchors: ReadonlyMap<number, string>;
  /** Records passed to {@link check}, including a broken one. */
  checked = 0;

  constructor(
    readonly chain: string,
    anchors: readonly ChainAnchor[] = [],
  ) {
    this.anchors = new Map(anchors.filter((a) => a.chain === chain).map((a) => [a.seq, a.hash]));
  }

  /** Checks the next record; returns the chain's first broken link once there is one. */
  check(row: VerifiableRecord): BrokenLink | undefined {
    if (this.broken !== undefined) return this.broken;
    this.checked += 1;
    const seq = this.expectedSeq;
    if (row.chain !== this.chain || row.seq !== seq) {
      return this.fail(seq, 'seq-gap', `expected seq ${seq}, found seq ${row.seq} in chain ${row.chain}`);
    }
    if (row.prevHash !== this.prevHash) {
      return this.fail(seq, 'prev-hash-mismatch', `prevHash does not match the hash of seq ${seq - 1}`);
    }
    let computed: string;
    try {
      computed = linkHash(row.prevHash, hashedContent(row, row.chain, row.seq));
    } catch {
      return this.fail(seq, 'hash-mismatch', 'the stored content is no longer JSON data');
    }
    if (computed !== row.hash) {
      return this.fail(seq, 'hash-mismatch', 'the stored content does not hash to the stored hash');
    }
    const differing = differingColumns(indexedColumns(row.record), row.columns);
    if (differing.length > 0) {
      return this.fail(
        seq,
        'column-mismatch',
        `columns differ from the hashed body: ${differing.join(', ')}`,
      );
    }
    const anchored = this.anchors.get(seq);
    if (anchored !== undefined && anchored !== row.hash) {
      return this.fail(seq, 'anchor-mismatch', `seq ${seq} no longer has the anchored hash`);
    }
    this.expectedSeq = seq + 1;
    this.prevHash = row.hash;
    return undefined;
  }

  /** Call after the last record: an anchor beyond the end means records were removed from the end. */
  end(): BrokenLink | undefined {
    if (this.broken !== undefined) return this.broken;
    const beyond = [...this.anchors.keys()].filter((seq) => seq >= this.expectedSeq);
    if (beyond.length > 0) {
      return this.fail(
        this.expectedSeq,
        'anchor-mismatch',
        `the chain ends at seq ${this.expectedSeq - 1} but seq ${Math.max(...beyond)} was anchored`,
      );
    }
    return undefined;
  }

  /** The last verified record (undefined for an empty chain). */
  get head(): ChainHead | undefined {
    return this.expectedSeq === 1 ? undefined : { seq: this.expectedSeq - 1, hash: this.prevHash };
  }

  private fail(seq: number, reason: BrokenLinkReason, detail: string): BrokenLink {
    this.broken = { chain: this.chain, firstBrokenSeq: seq, reason, detail };
    return this.broken;
  }
}

/** Reads up to `limit` records of `chain` with seq > `afterSeq`, in seq order. */
export type ReadChainPage = (
  chain: string,
  afterSeq: number,
  limit: number,
) => Promise<readonly VerifiableRecord[]>;

export interface VerifyChainsInput {
  /** The chains the store holds. Anchored chains are verified too, even if the store lost them. */
  readonly chains: readonly string[];
  readonly readPage: ReadChainPage;
  readonly only?: string;
  readonly anchors?: readonly ChainAnchor[];
  readonly pageSize?: number;
  readonly onProgress?: (progress: VerifyProgress) => void;
}

/**
 * The verify procedure every store shares: each chain (in name order) page by page through a
 * {@link ChainVerifier}, stopping at the first broken link.
 */
export async function verifyChains(input: VerifyChainsInput): Promise<VerifyReport> {
  const anchors = input.anchors ?? [];
  const pageSize = input.pageSize ?? 1000;
  const names = new Set([...input.chains, ...anchors.map((a) => a.chain)]);
  const chains = [...names].filter((c) => input.only === undefined || c === input.only).sort(byCodeUnits);
  const heads: Record<string, ChainHead> = {};
  let checked = 0;
  for (const chain of chains) {
    const verifier = new ChainVerifier(chain, anchors);
    let afterSeq = 0;
    let broken: BrokenLink | undefined;
    for (;;) {
      const page = await input.readPage(chain, afterSeq, pageSize);
      for (const row of page) {
        broken = verifier.check(row);
        if (broken !== undefined) break;
      }
      input.onProgress?.({ chain, checked: checked + verifier.checked });
      const last = page[page.length - 1];
      if (broken !== undefined || page.length < pageSize || last === undefined) break;
      afterSeq = last.seq;
    }
    broken ??= verifier.end();
    checked += verifier.checked;
    if (broken !== undefined) return { ok: false, checked, ...broken };
    if (verifier.head !== undefined) heads[chain] = verifier.head;
  }
  return { ok: true, checked, heads };
}

/** Plain UTF-16 code-unit order (JavaScript's default string order), independent of any locale. */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
