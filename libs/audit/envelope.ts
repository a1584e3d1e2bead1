import { ToolgateError } from '../core/errors.js';
import { OUTCOMES } from '../core/outcome.js';
import type { AuditRecord } from '../core/audit-record.js';
import type { AuditEnvelope, AuditSource } from '../ports/audit-store.js';
import { storableText, toStorableJson } from './storable-json.js';

const SOURCES: ReadonlySet<string> = new Set<AuditSource>([
  'executor',
  'reconciler',
  'operator',
  'mcp-gateway',
]);
const OUTCOME_SET: ReadonlySet<string> = new Set(OUTCOMES);
/** Ids are keys, not documents: anything longer is a producer bug. */
export const MAX_ID_LENGTH = 512;

/**
 * Checks one envelope and returns it in stored form (see {@link toStorableJson}): the exact value
 * that is hashed, written and later read back. Throws ToolgateError MALFORMED_EVENT naming the first
 * bad field (never its value) when a field a store indexes or chains on is missing or malformed, or
 * SCHEMA_INVALID when the record is not JSON data. Pure.
 */
export function prepareEnvelope(envelope: AuditEnvelope, position = 0): AuditEnvelope {
  const where = `audit record #${position}`;
  const e = envelope as Partial<Record<keyof AuditEnvelope, unknown>>;
  requireId(e.recordId, `${where}: recordId`);
  requireId(e.producerId, `${where}: producerId`);
  if (typeof e.source !== 'string' || !SOURCES.has(e.source)) malformed(`${where}: source`);
  if (typeof e.recordedAtMs !== 'number' || !Number.isSafeInteger(e.recordedAtMs) || e.recordedAtMs < 0) {
    malformed(`${where}: recordedAtMs`);
  }
  if (typeof e.record !== 'object' || e.record === null || Array.isArray(e.record))
    malformed(`${where}: record`);
  const r = e.record as Partial<Record<keyof AuditRecord, unknown>>;
  requireId(r.tenant, `${where}: record.tenant`);
  requireId(r.callId, `${where}: record.callId`);
  requireId(r.tool, `${where}: record.tool`);
  requireId(r.principalId, `${where}: record.principalId`);
  if (typeof r.traceId !== 'string') malformed(`${where}: record.traceId`);
  if (typeof r.outcome !== 'string' || !OUTCOME_SET.has(r.outcome)) malformed(`${where}: record.outcome`);
  if (r.resourceKey !== undefined) requireId(r.resourceKey, `${where}: record.resourceKey`);
  return {
    recordId: storableText(envelope.recordId),
    producerId: storableText(envelope.producerId),
    source: envelope.source,
    recordedAtMs: envelope.recordedAtMs,
    record: toStorableJson(envelope.record) as AuditRecord,
  };
}

function requireId(value: unknown, field: string): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ID_LENGTH) malformed(field);
}

function malformed(field: string): never {
  throw new ToolgateError('MALFORMED_EVENT', `Malformed ${field}.`);
}
