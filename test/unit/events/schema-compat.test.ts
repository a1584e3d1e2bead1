import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { backwardProblems } from '../../../libs/events/schema-compat.js';
import { loadSchemas, type AvroSchemaJson } from '../../../libs/events/schema-files.js';
import { checkSchemaHistory } from '../../../services/cli/schemas-check.js';
import { sampleAudit } from '../../fixtures/events.js';

const current = loadSchemas();

function withFields(
  schema: AvroSchemaJson,
  edit: (fields: Record<string, unknown>[]) => Record<string, unknown>[],
) {
  return { ...schema, fields: edit([...(schema.fields as Record<string, unknown>[])]) };
}

describe('backward compatibility check', () => {
  it('accepts a new optional field with a default', () => {
    const next = withFields(current.calls, (f) => [...f, { name: 'priority', type: 'int', default: 0 }]);
    expect(backwardProblems(current.calls, next)).toEqual([]);
  });

  it('refuses a new required field without a default', () => {
    const next = withFields(current.calls, (f) => [...f, { name: 'priority', type: 'int' }]);
    expect(backwardProblems(current.calls, next).join()).toMatch(/cannot be read/);
  });

  it('refuses a removed enum symbol', () => {
    const next = withFields(current.results, (f) =>
      f.map((field) =>
        field.name === 'outcome'
          ? { ...field, type: { type: 'enum', name: 'Outcome', symbols: ['SUCCESS', 'DUPLICATE'] } }
          : field,
      ),
    );
    expect(backwardProblems(current.results, next)).not.toEqual([]);
  });

  it('refuses a type change that does not promote', () => {
    const next = withFields(current.calls, (f) =>
      f.map((x) => (x.name === 'step' ? { ...x, type: 'string' } : x)),
    );
    expect(backwardProblems(current.calls, next)).not.toEqual([]);
  });

  it('every committed schema version is backward compatible with the one before it', () => {
    const results = checkSchemaHistory();
    expect(results.map((r) => r.file).sort()).toHaveLength(4);
    for (const r of results) expect(r.problems, r.file).toEqual([]);
  });

  it("the audit schema with policy and the one before it read each other's events", () => {
    const before = withFields(current.audit, (f) => f.filter((field) => field.name !== 'policy'));
    expect(before.fields).toHaveLength((current.audit.fields as unknown[]).length - 1);
    // BACKWARD (a new consumer reads old events) and FORWARD (an old consumer reads new events).
    expect(backwardProblems(before, current.audit)).toEqual([]);
    expect(backwardProblems(current.audit, before)).toEqual([]);

    const now = avro.Type.forSchema(current.audit as avro.Schema);
    const old = avro.Type.forSchema(before as avro.Schema);
    const { policy: _policy, ...withoutPolicy } = sampleAudit;
    expect(now.fromBuffer(old.toBuffer(withoutPolicy), now.createResolver(old))).toEqual({
      ...withoutPolicy,
      policy: null,
    });
    expect(old.fromBuffer(now.toBuffer(sampleAudit), old.createResolver(now))).toEqual(withoutPolicy);
  });
});
