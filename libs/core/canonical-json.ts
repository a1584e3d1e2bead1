import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import { ToolgateError } from './errors.js';

type Canonicalize = (input: unknown) => string | undefined;

// The package is CommonJS (`module.exports = fn`) but its typings declare an ES default export, so under
// NodeNext the default import is typed as the module record. Accept either shape at runtime.
const loaded: unknown = canonicalizeModule;
const canonicalize = (
  typeof loaded === 'function' ? loaded : (loaded as { default: unknown }).default
) as Canonicalize;

/**
 * The RFC 8785 (JCS) canonical JSON text of `value`: object keys sorted by UTF-16 code units, no
 * whitespace, numbers in ECMAScript shortest form. Two values that are equal as JSON data give the
 * same string, whatever the key order they were built with.
 *
 * Only JSON data is accepted: `null`, booleans, finite numbers, strings, arrays and plain objects
 * (prototype `Object.prototype` or `null`). Everything else is refused with a `ToolgateError`
 * SCHEMA_INVALID instead of being silently dropped or coerced, because a lossy encoding would let two
 * different argument sets share an idempotency key: `undefined` (top level or in an array, including
 * array holes), NaN and ±Infinity, BigInt, symbols, functions, Dates, Maps, class instances, and
 * cycles. An object property whose value is `undefined` is omitted, as `JSON.stringify` does, so an
 * optional field left undefined and an absent field encode the same. `-0` encodes as `0`.
 *
 * Strings are kept as JavaScript strings: a lone surrogate (not valid I-JSON) is escaped as `\udXXX`
 * rather than refused, so any value `JSON.parse` can produce is accepted and encodes deterministically.
 *
 * The value is copied while it is checked, so getters run once and what was checked is what is
 * encoded. Never throws anything but a ToolgateError.
 */
export function canonicalJson(value: unknown): string {
  let copy: unknown;
  try {
    copy = toPlainJson(value, '$', new Set());
  } catch (err) {
    if (err instanceof ToolgateError) throw err;
    throw new ToolgateError('SCHEMA_INVALID', 'The value cannot be read as JSON data.', { cause: err });
  }
  const text = canonicalize(copy);
  if (text === undefined) throw refuse('$', 'a value that has no JSON encoding');
  return text;
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of `text`. Deterministic; 64 characters. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Deeper nesting than this is refused rather than risking a stack overflow mid-walk. */
export const MAX_JSON_DEPTH = 256;

function toPlainJson(value: unknown, path: string, ancestors: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw refuse(path, String(value));
      return value;
    case 'undefined':
      throw refuse(path, 'undefined');
    case 'bigint':
      throw refuse(path, 'a BigInt');
    case 'symbol':
      throw refuse(path, 'a symbol');
    case 'function':
      throw refuse(path, 'a function');
    case 'object':
      break;
  }
  if (value === null) return null;
  if (ancestors.size >= MAX_JSON_DEPTH) throw refuse(path, `nesting deeper than ${MAX_JSON_DEPTH}`);
  if (ancestors.has(value)) throw refuse(path, 'a cycle');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) throw refuse(`${path}[${i}]`, 'an array hole');
        out.push(toPlainJson(value[i], `${path}[${i}]`, ancestors));
      }
      return out;
    }
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw refuse(path, 'an object that is not plain data');
    if (Object.getOwnPropertySymbols(value).length > 0) throw refuse(path, 'a symbol-keyed property');
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const child = (value as Record<string, unknown>)[key];
      if (child === undefined) continue;
      // defineProperty, so a "__proto__" key stays data instead of changing the copy's prototype.
      Object.defineProperty(out, key, {
        value: toPlainJson(child, `${path}.${key}`, ancestors),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  } finally {
    ancestors.delete(value);
  }
}

function refuse(path: string, what: string): ToolgateError {
  // The path names keys the caller chose, never values, so it is safe to show.
  return new ToolgateError('SCHEMA_INVALID', `Not JSON data: ${what} at ${truncate(path)}.`);
}

function truncate(path: string): string {
  return path.length <= 200 ? path : `${path.slice(0, 200)}…`;
}
