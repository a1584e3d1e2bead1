import { stdSerializers } from 'pino';
import { REDACTED } from '../pipeline/build-audit-record.js';

/**
 * Field names that hold credentials, as they are usually spelled. The pino `redact` paths are built
 * from these (fast, exact names, first levels); {@link isSecretKey} generalizes them for the deep
 * scrub (any depth, any case, `_`/`-` ignored, and names that end in one of them, like `dbPassword`).
 */
export const SECRET_FIELD_NAMES: readonly string[] = [
  'authorization',
  'Authorization',
  'proxy-authorization',
  'cookie',
  'Cookie',
  'set-cookie',
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'idToken',
  'id_token',
  'sessionToken',
  'password',
  'passwd',
  'secret',
  'clientSecret',
  'client_secret',
  'apiKey',
  'api_key',
  'x-api-key',
  'privateKey',
  'private_key',
  'principalAssertion',
  'principal_assertion',
  'assertion',
  'credentials',
  'jwt',
];

/** How many object levels the redact paths cover; the deep scrub covers the rest. */
export const REDACT_PATH_DEPTH = 4;

/**
 * pino `redact` paths for {@link SECRET_FIELD_NAMES} at the top level and under up to
 * `REDACT_PATH_DEPTH - 1` levels of any keys (`token`, `*.token`, `*.*.token`, …).
 */
export function secretRedactPaths(depth = REDACT_PATH_DEPTH): string[] {
  const paths: string[] = [];
  for (const name of SECRET_FIELD_NAMES) {
    const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name);
    for (let level = 0; level < depth; level++) {
      const prefix = '*.'.repeat(level);
      paths.push(identifier ? `${prefix}${name}` : `${prefix.slice(0, -1)}["${name}"]`);
    }
  }
  return paths;
}

const normalize = (key: string): string => key.toLowerCase().replace(/[-_\s]/g, '');
const EXACT = new Set(SECRET_FIELD_NAMES.map(normalize));
const SUFFIXES = [
  'password',
  'passwd',
  'secret',
  'token',
  'apikey',
  'assertion',
  'cookie',
  'authorization',
  'privatekey',
  'credentials',
  'credential',
];

/**
 * Whether a field name denotes a credential: one of {@link SECRET_FIELD_NAMES} or a name ending in
 * password, secret, token, apiKey, assertion, cookie, authorization, privateKey or credential(s),
 * compared without case, `-` and `_`. `maxTokens` or `inputTokens` (a count) are not secrets.
 */
export function isSecretKey(key: string): boolean {
  const k = normalize(key);
  return EXACT.has(k) || SUFFIXES.some((s) => k.endsWith(s));
}

/** Credentials that give themselves away by shape, whatever field they sit in. */
const SECRET_TEXT: readonly (readonly [RegExp, string])[] = [
  // A compact JWS/JWT: base64url header starting `{"` (eyJ), payload, signature.
  [/eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, REDACTED],
  // HTTP credentials in a header value or an error message.
  [/\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}/gi, REDACTED],
  // User info in a URL (redis://:pw@host, postgres://user:pw@host): keep the scheme and host.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*:[^\s/@]*@/gi, `$1${REDACTED}@`],
];

/**
 * `text` with every JWT-shaped or `Bearer …`/`Basic …` credential, and the user:password part of
 * URLs, replaced by "[redacted]".
 */
export function scrubText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_TEXT) out = out.replace(pattern, replacement);
  return out;
}

/** Objects nested deeper than this are replaced whole: a log line is not a data dump. */
export const MAX_SCRUB_DEPTH = 12;

/**
 * A copy of `value` safe to log: the value of every field whose name {@link isSecretKey} is
 * "[redacted]", at any depth; strings are passed through {@link scrubText}; Errors become pino's
 * serialized form (message, stack, cause chain, own fields), scrubbed the same way. Cycles become
 * "[circular]" and anything below {@link MAX_SCRUB_DEPTH} levels "[too deep]". Objects with
 * `toJSON` are scrubbed in their JSON form. Never mutates `value`; never throws.
 */
export function scrubSecrets<T>(value: T): T {
  try {
    return walk(value, 0, new WeakSet()) as T;
  } catch {
    return REDACTED as T;
  }
}

function walk(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date || Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return value;
  if (seen.has(value)) return '[circular]';
  if (depth >= MAX_SCRUB_DEPTH) return '[too deep]';
  seen.add(value);
  try {
    if (value instanceof Error) return walk(stdSerializers.errWithCause(value), depth, seen);
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return walk(toJSON.call(value), depth, seen);
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1, seen));
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const field = isSecretKey(key)
        ? REDACTED
        : walk((value as Record<string, unknown>)[key], depth + 1, seen);
      // defineProperty keeps a "__proto__" field an ordinary field of the copy.
      Object.defineProperty(out, key, { value: field, enumerable: true, writable: true, configurable: true });
    }
    return out;
  } finally {
    seen.delete(value);
  }
}
