import avro from 'avsc';
import type { AvroSchemaJson } from './schema-files.js';

/**
 * BACKWARD compatibility, the rule the registry enforces per subject: a consumer built with `next`
 * must read every event written with `previous`. Returns the problems found (empty = compatible).
 * Uses Avro schema resolution (reader = next, writer = previous), so it refuses exactly what an Avro
 * reader would fail on: a new field without a default, a changed type that does not promote, a removed
 * enum symbol, a renamed record without an alias.
 */
export function backwardProblems(previous: AvroSchemaJson, next: AvroSchemaJson): string[] {
  let writer: avro.Type;
  let reader: avro.Type;
  try {
    writer = avro.Type.forSchema(previous as avro.Schema);
  } catch (err) {
    return [`previous schema does not parse: ${(err as Error).message}`];
  }
  try {
    reader = avro.Type.forSchema(next as avro.Schema);
  } catch (err) {
    return [`new schema does not parse: ${(err as Error).message}`];
  }
  try {
    reader.createResolver(writer);
    return [];
  } catch (err) {
    return [`events written with the previous schema cannot be read: ${(err as Error).message}`];
  }
}
