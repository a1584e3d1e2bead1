import type { AvroConfluentSchema } from '@kafkajs/confluent-schema-registry/dist/@types.js';
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { describe, expect, it } from 'vitest';
import { schemaRegistryUrl } from '../../helpers/env.js';
import { uniqueName } from '../../helpers/names.js';
import { setSubjectCompatibility, subjectCompatibility, subjectVersions } from './ccompat-client.js';

const V1 = {
  type: 'record',
  name: 'SmokeResult',
  namespace: 'toolgate.smoke',
  fields: [{ name: 'callId', type: 'string' }],
};
/** Adds a field without a default: a v2 reader cannot read v1 data, so BACKWARD must refuse it. */
const V2_INCOMPATIBLE = { ...V1, fields: [...V1.fields, { name: 'outcome', type: 'string' }] };
/** Adds a field with a default: v2 readers fill it in for v1 data, so BACKWARD accepts it. */
const V2_COMPATIBLE = { ...V1, fields: [...V1.fields, { name: 'outcome', type: 'string', default: 'OK' }] };

const avro = (schema: object): AvroConfluentSchema => ({
  type: SchemaType.AVRO,
  schema: JSON.stringify(schema),
});

describe('schema registry: subject compatibility', () => {
  it('refuses a backward-incompatible change and accepts a compatible one under BACKWARD', async () => {
    const base = schemaRegistryUrl();
    const registry = new SchemaRegistry({ host: base });
    const subject = `${uniqueName('smoke_compat')}-value`;
    await setSubjectCompatibility(base, subject, 'BACKWARD');
    const v1 = await registry.register(avro(V1), { subject, compatibility: COMPATIBILITY.BACKWARD });
    expect(await subjectCompatibility(base, subject)).toBe('BACKWARD');

    await expect(
      registry.register(avro(V2_INCOMPATIBLE), { subject, compatibility: COMPATIBILITY.BACKWARD }),
    ).rejects.toThrow(/incompatible/i);
    expect(await subjectVersions(base, subject)).toEqual([1]);

    const v2 = await registry.register(avro(V2_COMPATIBLE), {
      subject,
      compatibility: COMPATIBILITY.BACKWARD,
    });
    expect(v2.id).not.toBe(v1.id);
    expect(await subjectVersions(base, subject)).toEqual([1, 2]);
  });

  it('accepts the same incompatible change when the subject is NONE (the refusal is the rule, not the schema)', async () => {
    const base = schemaRegistryUrl();
    const registry = new SchemaRegistry({ host: base });
    const subject = `${uniqueName('smoke_compat_none')}-value`;
    await setSubjectCompatibility(base, subject, 'NONE');
    await registry.register(avro(V1), { subject, compatibility: COMPATIBILITY.NONE });
    await registry.register(avro(V2_INCOMPATIBLE), { subject, compatibility: COMPATIBILITY.NONE });
    expect(await subjectVersions(base, subject)).toEqual([1, 2]);
  });
});
