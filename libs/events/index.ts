/** Event contracts (Avro in schemas/), topic names, and the codecs that put them on the wire. */
export * from './contracts.js';
export * from './topics.js';
export { LocalEventCodec, DEFAULT_MAX_EVENT_BYTES } from './local-codec.js';
export { RegistryEventCodec, type RegistryCodecOptions } from './registry-codec.js';
export { backwardProblems } from './schema-compat.js';
export { loadSchemas, schemasDir, type AvroSchemaJson } from './schema-files.js';
export { frame, unframe, MAGIC_BYTE, OversizedEventError } from './wire-format.js';
export { CALL_LIMITS, MAX_ENVELOPE_READ_BYTES, callTooLarge, type CallLimits } from './size-limits.js';
