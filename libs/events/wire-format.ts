import { ToolgateError } from '../core/errors.js';
import { MAX_ENVELOPE_READ_BYTES } from './size-limits.js';

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

/**
 * MALFORMED_EVENT for a message above a codec's size limit. `decoded` is the event read anyway
 * (when the message is at most {@link MAX_ENVELOPE_READ_BYTES} and decodes), so a consumer that
 * can answer the sender — the executor, from the request's reply address — still does; other
 * consumers treat it as any malformed event.
 */
export class OversizedEventError extends ToolgateError {
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
    readonly decoded: unknown,
  ) {
    super('MALFORMED_EVENT', `malformed event: message is ${bytes} bytes, above the ${maxBytes}-byte limit`, {
      retryable: false,
    });
  }
}

/**
 * The error for an oversized message: decodes it with `decode` (ignoring the size limit) when it is
 * at most {@link MAX_ENVELOPE_READ_BYTES}, to attach the event; a message that does not decode is
 * attached as undefined. Rejects only with what `decode` rejects with that is not MALFORMED_EVENT
 * (a registry outage), so the caller retries instead of calling the message poison.
 */
export async function oversizedEventError(
  bytes: Buffer,
  maxBytes: number,
  decode: () => Promise<unknown>,
): Promise<OversizedEventError> {
  let decoded: unknown;
  if (bytes.length <= MAX_ENVELOPE_READ_BYTES) {
    try {
      decoded = await decode();
    } catch (err) {
      if (!(err instanceof ToolgateError && err.code === 'MALFORMED_EVENT')) throw err;
    }
  }
  return new OversizedEventError(bytes.length, maxBytes, decoded);
}

/**
 * What `decode` reads from `bytes` (ignoring any size limit of its own) when the message is at most
 * `maxBytes`; otherwise rejects with the {@link oversizedEventError} of it (the event attached when
 * it can be read). A codec's `decode` is this around its unlimited decoder.
 */
export async function decodeWithinLimit<T>(
  bytes: Buffer,
  maxBytes: number,
  decode: () => Promise<T>,
): Promise<T> {
  if (bytes.length > maxBytes) throw await oversizedEventError(bytes, maxBytes, decode);
  return decode();
}
