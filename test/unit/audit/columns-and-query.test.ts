import { describe, expect, it } from 'vitest';
import { attemptLabel, indexedColumns, resourceIdOf } from '../../../libs/audit/columns.js';
import { prepareEnvelope } from '../../../libs/audit/envelope.js';
import { linkRecords } from '../../../libs/audit/hash-chain.js';
import {
  compareStored,
  matchesQuery,
  matchesWhoDid,
  queryLimit,
  splitWhoDid,
  timeBound,
  whoDidEntry,
} from '../../../libs/audit/query.js';
import { OUTCOMES } from '../../../libs/core/outcome.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { AuditRecord } from '../../../libs/core/audit-record.js';
import { auditRecord, envelope, refusedRecord } from './fixtures.js';

describe('resourceIdOf', () => {
  it('is the part after <tenant>:<kind>:, which may itself contain colons', () => {
    expect(resourceIdOf('t1:order:O-5512')).toBe('O-5512');
    expect(resourceIdOf('t1:inventory:wh-1:SKU-7')).toBe('wh-1:SKU-7');
    expect(resourceIdOf('t1:task')).toBe('t1:task');
    expect(resourceIdOf('O-5512')).toBe('O-5512');
    expect(resourceIdOf('t1:order:')).toBe('');
  });
});

describe('attemptLabel', () => {
  it('labels every outcome', () => {
    const labels = Object.fromEntries(OUTCOMES.map((o) => [o, attemptLabel(o)]));
    expect(labels).toEqual({
      SUCCESS: 'did',
      DUPLICATE: 'duplicate',
      UNKNOWN_TOOL: 'refused',
      SCHEMA_INVALID: 'refused',
      UNAUTHORIZED: 'refused',
      RATE_LIMITED: 'refused',
      POLICY_VIOLATION: 'refused',
      EXECUTION_ERROR: 'failed',
      UNRESOLVED: 'unresolved',
    });
  });
});

describe('indexedColumns', () => {
  it('takes the first stage that did not pass as stage and reason', () => {
    const c = indexedColumns(refusedRecord({ resourceKey: 't1:order:O-1' }));
    expect(c).toMatchObject({
      stage: 'authorize',
      reason: 'not permitted',
      errorCode: 'UNAUTHORIZED',
      outcome: 'UNAUTHORIZED',
      resourceKey: 't1:order:O-1',
      resourceId: 'O-1',
      chain: 't1',
    });
    const ok = indexedColumns(auditRecord({ resourceKey: undefined }));
    expect(ok).toMatchObject({
      stage: null,
      reason: null,
      resourceKey: null,
      resourceId: null,
      errorCode: null,
    });
  });

  it('is total over a body that is not a record', () => {
    for (const junk of [{}, { decisions: 'x' }, { decisions: [null, 3, { decision: 'refuse' }] }]) {
      expect(() => indexedColumns(junk as unknown as AuditRecord)).not.toThrow();
    }
  });
});

describe('query helpers', () => {
  const rows = linkRecords('t1', undefined, [
    prepareEnvelope(envelope(auditRecord({ principalId: 'p1' }), { recordedAtMs: 100 })),
    prepareEnvelope(envelope(refusedRecord({ principalId: 'p2' }), { recordedAtMs: 200 })),
    prepareEnvelope(envelope(auditRecord({ resourceKey: 't1:order:O-9' }), { recordedAtMs: 300 })),
  ]);

  it('matches every filter together, with [fromMs, toMs)', () => {
    expect(rows.filter((r) => matchesQuery(r, { principalId: 'p2' }))).toHaveLength(1);
    expect(rows.filter((r) => matchesQuery(r, { outcome: 'SUCCESS', fromMs: 100, toMs: 300 }))).toHaveLength(
      1,
    );
    expect(rows.filter((r) => matchesQuery(r, { fromMs: 200 }))).toHaveLength(2);
    expect(rows.filter((r) => matchesQuery(r, { toMs: 200 }))).toHaveLength(1);
    expect(
      rows.filter((r) => matchesQuery(r, { resourceKey: 't1:order:O-5512', tenant: 't1' })),
    ).toHaveLength(2);
  });

  it('whoDid matches by full key or by tool + id, and splits did from tried', () => {
    const byKey = rows.filter((r) => matchesWhoDid(r, 't1:order:O-5512', {}));
    const byId = rows.filter((r) => matchesWhoDid(r, { tool: 'refund_payment', resource: 'O-5512' }, {}));
    expect(byId).toEqual(byKey);
    expect(rows.filter((r) => matchesWhoDid(r, { tool: 'other_tool', resource: 'O-5512' }, {}))).toHaveLength(
      0,
    );
    const answer = splitWhoDid(byKey.sort(compareStored).map(whoDidEntry));
    expect(answer.did.map((e) => e.principalId)).toEqual(['p1']);
    expect(answer.tried).toEqual([
      expect.objectContaining({
        principalId: 'p2',
        label: 'refused',
        reason: 'not permitted',
        stage: 'authorize',
      }),
    ]);
  });

  it('clamps limits and refuses non-finite bounds', () => {
    expect(queryLimit(undefined)).toBe(100);
    expect(queryLimit(0)).toBe(1);
    expect(queryLimit(10 ** 9)).toBe(10_000);
    expect(queryLimit(2.7)).toBe(2);
    expect(() => queryLimit(NaN)).toThrow(ToolgateError);
    expect(timeBound('fromMs', 1.2)).toBe(2);
    expect(() => timeBound('fromMs', Infinity)).toThrow(ToolgateError);
  });
});
