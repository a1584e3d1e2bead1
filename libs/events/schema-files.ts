import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EVENT_KINDS, SCHEMA_FILE, type EventKind } from './contracts.js';

/** A parsed .avsc document (Avro schema JSON). */
export type AvroSchemaJson = Record<string, unknown>;

/**
 * The `schemas/` directory, found from this module both when run from source (tsx) and from `dist/`.
 */
export function schemasDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i += 1) {
    const candidate = join(dir, 'schemas');
    if (existsSync(join(candidate, SCHEMA_FILE.calls))) return candidate;
    dir = dirname(dir);
  }
  throw new Error('cannot find the schemas/ directory next to the toolgate package');
}

/** Reads and parses the current schema of each event kind. */
export function loadSchemas(dir = schemasDir()): Readonly<Record<EventKind, AvroSchemaJson>> {
  const out = {} as Record<EventKind, AvroSchemaJson>;
  for (const kind of EVENT_KINDS) {
    out[kind] = JSON.parse(readFileSync(join(dir, SCHEMA_FILE[kind]), 'utf8')) as AvroSchemaJson;
  }
  return out;
}
