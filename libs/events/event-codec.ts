import type { EventKind, EventKinds } from './contracts.js';

/**
 * Turns events into bytes on the wire and back, in the Confluent wire format (magic byte 0, 4-byte
 * schema id, Avro body). `decode` never returns a half-read value: any input that is not a valid event
 * of the expected kind — wrong magic byte, unknown schema id, a schema of another kind, truncated or
 * undecodable Avro, oversized — throws ToolgateError('MALFORMED_EVENT') whose message says which.
 */
export interface EventCodec {
  encode<K extends EventKind>(kind: K, value: EventKinds[K]): Promise<Buffer>;
  decode<K extends EventKind>(kind: K, bytes: Buffer): Promise<EventKinds[K]>;
}
