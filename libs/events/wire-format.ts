import { ToolgateError } from '../core/errors.js';

/** Confluent wire format: magic byte 0, then the schema id as a 4-byte big-endian integer, then Avro. */
export const MAGIC_BYTE = 0;
const HEADER_BYTES = 5;

/** Prefixes an Avro body with the magic byte and schema id. */
export function frame(schemaId: number, body: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt8(MAGIC_BYTE, 0);
  header.writeUInt32BE(schemaId, 1);
  return Buffer.concat([header, body]);
}

/**
 * Splits a framed message. Throws MALFORMED_EVENT for an empty or short buffer, a wrong magic byte or a
 * message above `maxBytes` — checked before any decoding work is spent on it.
 */
export function unframe(bytes: Buffer, maxBytes: number): { schemaId: number; body: Buffer } {
  if (bytes.length > maxBytes) {
    throw malformed(`message is ${bytes.length} bytes, above the ${maxBytes}-byte limit`);
  }
  if (bytes.length < HEADER_BYTES)
    throw malformed(`message is ${bytes.length} bytes, shorter than the header`);
  const magic = bytes.readUInt8(0);
  if (magic !== MAGIC_BYTE) throw malformed(`wrong magic byte ${magic} (expected ${MAGIC_BYTE})`);
  return { schemaId: bytes.readUInt32BE(1), body: bytes.subarray(HEADER_BYTES) };
}

export function malformed(reason: string, cause?: unknown): ToolgateError {
  return new ToolgateError('MALFORMED_EVENT', `malformed event: ${reason}`, { retryable: false, cause });
}
