import avro from 'avsc';
import type { EventCodec } from './event-codec.js';
import { EVENT_KINDS, type EventKind, type EventKinds } from './contracts.js';
import { loadSchemas, type AvroSchemaJson } from './schema-files.js';
import { DEFAULT_MAX_EVENT_BYTES } from './size-limits.js';
import { decodeWithinLimit, frame, malformed, unframe } from './wire-format.js';

export { DEFAULT_MAX_EVENT_BYTES } from './size-limits.js';

/**
 * The embedded-mode codec: same wire format and same Avro schemas as production, with schema ids
 * assigned in-process (1..4 in EVENT_KINDS order) instead of by a registry. Used with the in-memory bus
 * so that the embedded mode exercises the same encode/decode path (and the same poison handling).
 */
export class LocalEventCodec implements EventCodec {
  private readonly types = new Map<number, { kind: EventKind; type: avro.Type }>();
  private readonly idOf = new Map<EventKind, number>();

  constructor(
    schemas: Readonly<Record<EventKind, AvroSchemaJson>> = loadSchemas(),
    private readonly maxBytes = DEFAULT_MAX_EVENT_BYTES,
  ) {
    EVENT_KINDS.forEach((kind, i) => {
      const id = i + 1;
      this.types.set(id, { kind, type: avro.Type.forSchema(schemas[kind] as avro.Schema) });
      this.idOf.set(kind, id);
    });
  }

  async encode<K extends EventKind>(kind: K, value: EventKinds[K]): Promise<Buffer> {
    const id = this.idOf.get(kind)!;
    return frame(id, this.types.get(id)!.type.toBuffer(value));
  }

  /** Refuses a message above `maxBytes` with an `OversizedEventError` (the event read anyway). */
  decode<K extends EventKind>(kind: K, bytes: Buffer): Promise<EventKinds[K]> {
    return decodeWithinLimit(bytes, this.maxBytes, () => this.decodeAnySize(kind, bytes));
  }

  private async decodeAnySize<K extends EventKind>(kind: K, bytes: Buffer): Promise<EventKinds[K]> {
    const { schemaId, body } = unframe(bytes, Number.POSITIVE_INFINITY);
    const entry = this.types.get(schemaId);
    if (entry === undefined) throw malformed(`unknown schema id ${schemaId}`);
    if (entry.kind !== kind)
      throw malformed(`schema id ${schemaId} is a ${entry.kind} event, expected ${kind}`);
    try {
      return entry.type.fromBuffer(body) as EventKinds[K];
    } catch (err) {
      throw malformed(`undecodable ${kind} payload`, err);
    }
  }
}
