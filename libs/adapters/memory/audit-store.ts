import { indexedColumns } from '../../audit/columns.js';
import { deepFreeze } from '../../core/deep-freeze.js';
import { prepareEnvelope } from '../../audit/envelope.js';
import { groupByChain, linkRecords } from '../../audit/hash-chain.js';
import {
  compareStored,
  matchesQuery,
  matchesWhoDid,
  queryLimit,
  queryOffset,
  splitWhoDid,
  timeBound,
  whoDidEntry,
} from '../../audit/query.js';
import { verifyChains, type VerifiableRecord } from '../../audit/verify.js';
import type {
  AuditEnvelope,
  AuditQuery,
  AuditStore,
  StoredAuditRecord,
  VerifyOptions,
  VerifyReport,
  WhoDidAnswer,
  WhoDidOptions,
  WhoDidTarget,
} from '../../ports/audit-store.js';
import { settle } from '../../core/settle.js';

/**
 * The audit store in process memory, with the PostgreSQL adapter's semantics: per-tenant hash chains,
 * idempotent appends by recordId, the same query order and the same verify. It offers no way to
 * change or remove a record; stored records are deep-frozen copies, and query results are frozen, so
 * no caller can edit the log through a reference. Appends run synchronously to completion, which
 * serializes them per chain within the process. Lost when the process exits.
 */
export class MemoryAuditStore implements AuditStore {
  private readonly chains = new Map<string, StoredAuditRecord[]>();
  private readonly byRecordId = new Set<string>();

  append(records: readonly AuditEnvelope[]): Promise<{ appended: number; duplicates: number }> {
    return settle(() => {
      const prepared = records.map((r, i) => prepareEnvelope(r, i));
      const { groups, repeated } = groupByChain(prepared);
      let appended = 0;
      let duplicates = repeated;
      for (const [chain, group] of groups) {
        const fresh = group.filter((e) => !this.byRecordId.has(e.recordId));
        duplicates += group.length - fresh.length;
        const stored = this.chains.get(chain) ?? [];
        const last = stored[stored.length - 1];
        const linked = linkRecords(chain, last && { seq: last.seq, hash: last.hash }, fresh);
        for (const record of linked) {
          stored.push(deepFreeze(record));
          this.byRecordId.add(record.recordId);
        }
        this.chains.set(chain, stored);
        appended += linked.length;
      }
      return { appended, duplicates };
    });
  }

  query(filter: AuditQuery): Promise<StoredAuditRecord[]> {
    return settle(() => {
      const limit = queryLimit(filter.limit);
      const offset = queryOffset(filter.offset);
      checkWindow(filter.fromMs, filter.toMs);
      const sign = filter.order === 'desc' ? -1 : 1;
      return [...this.chains.values()]
        .flat()
        .filter((r) => matchesQuery(r, filter))
        .sort((a, b) => sign * compareStored(a, b))
        .slice(offset, offset + limit);
    });
  }

  verify(opts: VerifyOptions = {}): Promise<VerifyReport> {
    return verifyChains({
      chains: [...this.chains.keys()],
      ...(opts.chain === undefined ? {} : { only: opts.chain }),
      ...(opts.anchors === undefined ? {} : { anchors: opts.anchors }),
      ...(opts.onProgress === undefined ? {} : { onProgress: opts.onProgress }),
      // seq n sits at index n - 1 of its chain's array.
      readPage: (chain, afterSeq, limit) =>
        settle(() => (this.chains.get(chain) ?? []).slice(afterSeq, afterSeq + limit).map(withColumns)),
    });
  }

  whoDid(target: WhoDidTarget, opts: WhoDidOptions = {}): Promise<WhoDidAnswer> {
    return settle(() => {
      const limit = queryLimit(opts.limit);
      checkWindow(opts.fromMs, opts.toMs);
      const entries = [...this.chains.values()]
        .flat()
        .filter((r) => matchesWhoDid(r, target, opts))
        .sort(compareStored)
        .slice(0, limit)
        .map(whoDidEntry);
      return splitWhoDid(entries);
    });
  }
}

/** Refuses a non-finite bound even when there is nothing to compare it with, as SQL would. */
function checkWindow(fromMs: number | undefined, toMs: number | undefined): void {
  timeBound('fromMs', fromMs);
  timeBound('toMs', toMs);
}

/** Memory keeps no separate columns: they are always what the body says. */
function withColumns(record: StoredAuditRecord): VerifiableRecord {
  return { ...record, columns: indexedColumns(record.record) };
}
