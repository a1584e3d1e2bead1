/**
 * JSON text of a value headed for an event field. Results and audit payloads passed output
 * validation, so they are JSON data; should one still not serialize (a BigInt, a cycle), the field
 * carries a marker instead of failing the whole call's publication. Total.
 */
export function jsonText(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  } catch {
    return '"[unserializable]"';
  }
}

/** Rough token equivalents of a text (4 UTF-8 bytes per token), capped to an Avro int. */
export function tokenEstimate(text: string | null | undefined): number {
  if (text === null || text === undefined || text.length === 0) return 0;
  return Math.min(2_147_483_647, Math.ceil(Buffer.byteLength(text, 'utf8') / 4));
}

/** An epoch-ms value as a whole number, as Avro `long` fields require. */
export function wholeMs(ms: number): number {
  return Number.isFinite(ms) ? Math.round(ms) : 0;
}
