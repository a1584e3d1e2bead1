import { describe, expect, it } from 'vitest';
import { prepareEnvelope } from '../../../libs/audit/envelope.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { AuditEnvelope } from '../../../libs/ports/audit-store.js';
import { auditRecord, envelope } from './fixtures.js';

function expectMalformed(env: unknown, field: RegExp): string {
  try {
    prepareEnvelope(env as AuditEnvelope, 3);
  } catch (err) {
    expect(err).toBeInstanceOf(ToolgateError);
    expect((err as ToolgateError).code).toBe('MALFORMED_EVENT');
    expect((err as ToolgateError).message).toMatch(field);
    return (err as ToolgateError).message;
  }
  throw new Error('expected a refusal');
}

describe('prepareEnvelope', () => {
  it('returns the stored form: cleaned strings, same content otherwise', () => {
    const rec = auditRecord({ arguments: { order_id: 'O\u0000' } });
    const env = envelope(rec);
    const out = prepareEnvelope(env);
    expect(out.record.arguments).toEqual({ order_id: 'O\uFFFD' });
    expect({ ...out, record: { ...out.record, arguments: rec.arguments } }).toEqual(env);
  });

  it('names the first malformed field and never its value', () => {
    const good = envelope(auditRecord());
    expectMalformed({ ...good, recordId: '' }, /#3: recordId/);
    expectMalformed({ ...good, recordId: 'x'.repeat(513) }, /recordId/);
    expectMalformed({ ...good, producerId: 5 }, /producerId/);
    expectMalformed({ ...good, source: 'someone' }, /source/);
    expectMalformed({ ...good, recordedAtMs: 1.5 }, /recordedAtMs/);
    expectMalformed({ ...good, record: null }, /record/);
    expectMalformed({ ...good, record: { ...good.record, tenant: '' } }, /record\.tenant/);
    expectMalformed({ ...good, record: { ...good.record, outcome: 'MAYBE' } }, /record\.outcome/);
    expectMalformed({ ...good, record: { ...good.record, traceId: null } }, /record\.traceId/);
    expectMalformed({ ...good, record: { ...good.record, resourceKey: '' } }, /record\.resourceKey/);
    const message = expectMalformed({ ...good, recordId: 'secret-token-value'.repeat(40) }, /recordId/);
    expect(message).not.toContain('secret-token-value');
  });

  it('refuses a record that is not JSON data', () => {
    const good = envelope(auditRecord());
    expect(() => prepareEnvelope({ ...good, record: { ...good.record, result: new Map() } })).toThrow(
      ToolgateError,
    );
  });
});
