import { isEffectApplied, type Outcome } from '../core/outcome.js';
import type { AuditRecord } from '../core/audit-record.js';
import type { AttemptLabel } from '../ports/audit-store.js';

/**
 * The fields of a record that stores keep in their own (indexed) columns. Every one is derived from
 * the hashed body by {@link indexedColumns}, and `verify` re-derives and compares them, so a column
 * edited to mislead queries is caught even though the columns themselves are not hashed.
 */
export interface IndexedColumns {
  readonly chain: string;
  readonly tool: string;
  readonly principalId: string;
  readonly tenant: string;
  readonly resourceKey: string | null;
  /** See {@link resourceIdOf}. */
  readonly resourceId: string | null;
  readonly callId: string;
  readonly traceId: string;
  readonly outcome: string;
  readonly errorCode: string | null;
  /** The first stage that did not pass (refused or short-circuited), if any. */
  readonly stage: string | null;
  /** That stage's model-safe reason, if it gave one. */
  readonly reason: string | null;
}

/** The chain a record belongs to: one per tenant, so tenants never wait on each other's appends. */
export function chainOf(record: Pick<AuditRecord, 'tenant'>): string {
  return record.tenant;
}

/**
 * The resource's own id inside a resource key of the form `<tenant>:<kind>:<id>` (e.g.
 * `t1:order:O-5512` → `O-5512`; the id itself may contain colons). A key with fewer than three parts
 * is its own id. This is what `whoDid({ tool, resource })` matches, so an operator can ask about
 * "O-5512" without knowing how the tool spells its keys.
 */
export function resourceIdOf(resourceKey: string): string {
  const first = resourceKey.indexOf(':');
  const second = first < 0 ? -1 : resourceKey.indexOf(':', first + 1);
  return second < 0 ? resourceKey : resourceKey.slice(second + 1);
}

/**
 * Derives the indexed columns from a stored body. Total: a body that is not a well-formed record
 * (possible only after tampering) yields columns that simply will not match the stored ones.
 */
export function indexedColumns(record: AuditRecord): IndexedColumns {
  const r = record as Partial<Record<keyof AuditRecord, unknown>>;
  const decisions = Array.isArray(r.decisions) ? (r.decisions as unknown[]) : [];
  const stop = decisions.find(
    (d): d is { stage?: unknown; reason?: unknown } =>
      typeof d === 'object' && d !== null && (d as { decision?: unknown }).decision !== 'pass',
  );
  const resourceKey = str(r.resourceKey);
  const tenant = str(r.tenant) ?? '';
  return {
    chain: tenant,
    tool: str(r.tool) ?? '',
    principalId: str(r.principalId) ?? '',
    tenant,
    resourceKey,
    resourceId: resourceKey === null ? null : resourceIdOf(resourceKey),
    callId: str(r.callId) ?? '',
    traceId: str(r.traceId) ?? '',
    outcome: str(r.outcome) ?? '',
    errorCode: str(r.errorCode),
    stage: str(stop?.stage),
    reason: str(stop?.reason),
  };
}

/** The names of the columns that differ, for a verify report. */
export function differingColumns(a: IndexedColumns, b: IndexedColumns): string[] {
  return (Object.keys(a) as (keyof IndexedColumns)[]).filter((k) => a[k] !== b[k]);
}

const REFUSED: ReadonlySet<Outcome> = new Set<Outcome>([
  'UNKNOWN_TOOL',
  'SCHEMA_INVALID',
  'UNAUTHORIZED',
  'RATE_LIMITED',
  'POLICY_VIOLATION',
]);

/** The {@link AttemptLabel} of an outcome. Total over {@link Outcome}. */
export function attemptLabel(outcome: Outcome): AttemptLabel {
  if (outcome === 'DUPLICATE') return 'duplicate';
  if (isEffectApplied(outcome)) return 'did';
  if (REFUSED.has(outcome)) return 'refused';
  if (outcome === 'UNRESOLVED') return 'unresolved';
  return 'failed';
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
