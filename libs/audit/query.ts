import { ToolgateError } from '../core/errors.js';
import type { Outcome } from '../core/outcome.js';
import type {
  AuditQuery,
  StoredAuditRecord,
  WhoDidAnswer,
  WhoDidEntry,
  WhoDidOptions,
  WhoDidTarget,
} from '../ports/audit-store.js';
import { attemptLabel, indexedColumns } from './columns.js';
import { byCodeUnits } from './verify.js';

export const DEFAULT_QUERY_LIMIT = 100;
export const MAX_QUERY_LIMIT = 10_000;
/** The most rows a query may skip (deeper paging: narrow the filters). */
export const MAX_QUERY_OFFSET = 1_000_000;

/** `limit` clamped to 1…{@link MAX_QUERY_LIMIT}; absent → {@link DEFAULT_QUERY_LIMIT}. */
export function queryLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_QUERY_LIMIT;
  if (!Number.isFinite(limit)) throw new ToolgateError('SCHEMA_INVALID', 'limit must be a finite number.');
  return Math.min(MAX_QUERY_LIMIT, Math.max(1, Math.floor(limit)));
}

/** `offset` as a whole number 0…{@link MAX_QUERY_OFFSET}; absent → 0. Throws SCHEMA_INVALID when not finite. */
export function queryOffset(offset: number | undefined): number {
  if (offset === undefined) return 0;
  if (!Number.isFinite(offset)) throw new ToolgateError('SCHEMA_INVALID', 'offset must be a finite number.');
  return Math.min(MAX_QUERY_OFFSET, Math.max(0, Math.floor(offset)));
}

/**
 * A time-window bound as an integer ms: stored times are integers, so `t >= x` ⟺ `t >= ceil(x)` and
 * `t < x` ⟺ `t < ceil(x)`. Throws ToolgateError SCHEMA_INVALID for a non-finite bound.
 */
export function timeBound(name: string, ms: number | undefined): number | undefined {
  if (ms === undefined) return undefined;
  if (!Number.isFinite(ms)) throw new ToolgateError('SCHEMA_INVALID', `${name} must be a finite number.`);
  return Math.ceil(ms);
}

/** Whether a stored record matches every filter given in `q` (the in-memory form of the SQL WHERE). */
export function matchesQuery(stored: StoredAuditRecord, q: AuditQuery): boolean {
  const c = indexedColumns(stored.record);
  return (
    (q.tool === undefined || c.tool === q.tool) &&
    (q.principalId === undefined || c.principalId === q.principalId) &&
    (q.tenant === undefined || c.tenant === q.tenant) &&
    (q.tenants === undefined || q.tenants.includes(c.tenant)) &&
    (q.resourceKey === undefined || c.resourceKey === q.resourceKey) &&
    (q.callId === undefined || c.callId === q.callId) &&
    (q.traceId === undefined || c.traceId === q.traceId) &&
    (q.outcome === undefined || c.outcome === q.outcome) &&
    (q.source === undefined || stored.source === q.source) &&
    inWindow(stored.recordedAtMs, q.fromMs, q.toMs)
  );
}

/** Whether a stored record is about `target` (see {@link WhoDidTarget}) within `opts`' window. */
export function matchesWhoDid(stored: StoredAuditRecord, target: WhoDidTarget, opts: WhoDidOptions): boolean {
  const c = indexedColumns(stored.record);
  const onTarget =
    typeof target === 'string'
      ? c.resourceKey === target
      : c.resourceId === target.resource && c.tool === target.tool;
  return (
    onTarget &&
    (opts.tenant === undefined || c.tenant === opts.tenant) &&
    (opts.tenants === undefined || opts.tenants.includes(c.tenant)) &&
    inWindow(stored.recordedAtMs, opts.fromMs, opts.toMs)
  );
}

/** The query order: `recordedAtMs`, then chain, then seq (reversed entirely for 'desc'). */
export function compareStored(a: StoredAuditRecord, b: StoredAuditRecord): number {
  return a.recordedAtMs - b.recordedAtMs || byCodeUnits(a.chain, b.chain) || a.seq - b.seq;
}

/** One whoDid row from a stored record. */
export function whoDidEntry(stored: StoredAuditRecord): WhoDidEntry {
  const c = indexedColumns(stored.record);
  const outcome = c.outcome as Outcome;
  return {
    label: attemptLabel(outcome),
    principalId: c.principalId,
    tenant: c.tenant,
    tool: c.tool,
    outcome,
    ...(stored.record.errorCode === undefined ? {} : { errorCode: stored.record.errorCode }),
    ...(c.reason === null ? {} : { reason: c.reason }),
    ...(c.stage === null ? {} : { stage: c.stage }),
    atMs: stored.recordedAtMs,
    traceId: c.traceId,
    callId: c.callId,
    resourceKey: c.resourceKey ?? '',
    recordId: stored.recordId,
    chain: stored.chain,
    seq: stored.seq,
  };
}

/** Splits rows (already oldest first) into the effect-causing ones and everything else. */
export function splitWhoDid(entries: readonly WhoDidEntry[]): WhoDidAnswer {
  return {
    did: entries.filter((e) => e.label === 'did'),
    tried: entries.filter((e) => e.label !== 'did'),
  };
}

function inWindow(atMs: number, from: number | undefined, to: number | undefined): boolean {
  const fromMs = timeBound('fromMs', from);
  const toMs = timeBound('toMs', to);
  return (fromMs === undefined || atMs >= fromMs) && (toMs === undefined || atMs < toMs);
}
