import { canonicalJson } from '../core/canonical-json.js';

/** What U+0000 and unpaired surrogates become in stored text. */
export const REPLACEMENT_CHARACTER = '\uFFFD';

// NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
// eslint-disable-next-line no-control-regex -- matching NUL is the point: PostgreSQL cannot store it
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` with U+0000 and lone surrogates replaced by U+FFFD; other text is returned unchanged. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE, REPLACEMENT_CHARACTER);
}

/**
 * A plain-data deep copy of `value` that PostgreSQL `jsonb` and `text` can hold exactly, so what is
 * read back equals what was written and hashes the same:
 * - only JSON data is accepted (see {@link canonicalJson}); anything else throws ToolgateError
 *   SCHEMA_INVALID, before any write;
 * - in every string and object key, U+0000 and unpaired UTF-16 surrogates become U+FFFD (jsonb
 *   refuses `\u0000` and unpaired `\uD8xx` escapes; a text column refuses NUL bytes);
 * - object keys come out in canonical (RFC 8785) order. If two keys only differ in characters that
 *   were replaced, the later one in that order wins.
 *
 * Both the in-memory and the PostgreSQL adapters store this form, so behaviour does not change with
 * the adapter. Pure; never mutates `value`.
 */
export function toStorableJson(value: unknown): unknown {
  return clean(JSON.parse(canonicalJson(value)) as unknown);
}

function clean(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(clean);
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    // defineProperty keeps a "__proto__" key an ordinary field of the copy.
    Object.defineProperty(out, storableText(key), {
      value: clean(child),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
