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

/** An epoch-ms value as a whole number, as Avro `long` fields require. */
export function wholeMs(ms: number): number {
  return Number.isFinite(ms) ? Math.round(ms) : 0;
}
