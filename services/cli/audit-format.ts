import { indexedColumns } from '../../libs/audit/columns.js';
import type { StoredAuditRecord, WhoDidEntry } from '../../libs/ports/audit-store.js';
import { formatTable, type Column } from './table.js';

/** An epoch-ms time as ISO 8601 UTC, or '-' for a missing one. */
export function isoTime(ms: number | null | undefined): string {
  return ms === null || ms === undefined || !Number.isFinite(ms) ? '-' : new Date(ms).toISOString();
}

const RECORD_COLUMNS: readonly Column[] = [
  { header: 'TIME' },
  { header: 'CHAIN#SEQ', maxWidth: 40 },
  { header: 'TOOL', maxWidth: 40 },
  { header: 'PRINCIPAL', maxWidth: 40 },
  { header: 'RESOURCE', maxWidth: 48 },
  { header: 'OUTCOME' },
  { header: 'STAGE' },
  { header: 'REASON', maxWidth: 60 },
  { header: 'TRACE' },
];

/** Audit records as a table, one line per record, in the order given. */
export function auditRecordsTable(records: readonly StoredAuditRecord[]): string {
  return formatTable(
    RECORD_COLUMNS,
    records.map((r) => {
      const c = indexedColumns(r.record);
      return [
        isoTime(r.recordedAtMs),
        `${r.chain}#${r.seq}`,
        c.tool,
        c.principalId,
        c.resourceKey,
        c.outcome,
        c.stage,
        c.reason,
        c.traceId,
      ];
    }),
  );
}

const WHO_COLUMNS: readonly Column[] = [
  { header: 'TIME' },
  { header: 'PRINCIPAL', maxWidth: 40 },
  { header: 'LABEL' },
  { header: 'OUTCOME' },
  { header: 'TOOL', maxWidth: 40 },
  { header: 'STAGE' },
  { header: 'REASON', maxWidth: 60 },
  { header: 'CALL', maxWidth: 40 },
  { header: 'TRACE' },
];

/** whoDid entries as a table, in the order given (the store gives them oldest first). */
export function whoDidTable(entries: readonly WhoDidEntry[]): string {
  return formatTable(
    WHO_COLUMNS,
    entries.map((e) => [
      isoTime(e.atMs),
      e.principalId,
      e.label,
      e.outcome,
      e.tool,
      e.stage,
      e.reason,
      e.callId,
      e.traceId,
    ]),
  );
}
