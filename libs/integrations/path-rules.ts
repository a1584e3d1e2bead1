/** Why a path argument was refused, before the file system is touched. */
export type PathRefusal =
  | 'empty'
  | 'too-long'
  | 'control-character'
  | 'absolute'
  | 'backslash'
  | 'colon'
  | 'encoded-separator'
  | 'unicode-lookalike'
  | 'traversal'
  | 'empty-segment'
  | 'hidden'
  | 'trailing-dot-or-space'
  | 'device-name'
  | 'short-name'
  | 'too-deep';

/** Limits of {@link relativePathSegments}. */
export interface PathRules {
  /** Allow segments starting with "." (`.env`, `.git`). Default false. */
  readonly allowHidden?: boolean;
  readonly maxLength?: number;
  readonly maxDepth?: number;
}

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Zero-width and bidirectional controls: they make a path display as something it is not. */
const INVISIBLE = /[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;
const ENCODED = /%(2e|2f|5c|00|25)/i;
/** Windows device names, with or without an extension (`NUL.txt` opens the null device there). */
const DEVICE =
  /^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]|conin\$|conout\$|clock\$)(\..*)?$/i;
/** 8.3 short names (`PROGRA~1`) reach a long name without spelling it. */
const SHORT_NAME = /~\d/;

/**
 * Splits a path argument into segments, or says why it is refused. Purely lexical: it rejects what
 * must never reach `path.join` — the file-system checks (realpath inside the root, regular file)
 * come after it. The rules are deliberately stricter than POSIX needs, because the path comes from
 * model output that may be shaped by a document it read, and because the same argument
 * may one day reach a Windows share:
 * - non-empty, at most `maxLength` (default 1024) characters and `maxDepth` (default 32) segments;
 * - no control characters (NUL included) and no invisible or bidi characters;
 * - relative: no leading `/`, no drive letter, no `~`, no backslash (UNC `\\server`, `..\`), no `:`
 *   (drive-relative `C:x`, alternate data streams `file:stream`);
 * - no percent-encoded dot, slash, backslash, NUL or percent (a layer that decodes would see `../`);
 * - unchanged by Unicode NFKC normalization (fullwidth `．．／` normalizes to `../`);
 * - no `.` or `..` segment, no empty segment (`a//b`, trailing `/`), no hidden segment unless
 *   allowed, no segment ending in `.` or space (Windows strips them), no device name (`CON`,
 *   `nul.txt`, `COM1`), no 8.3 short name (`PROGRA~1`).
 */
export function relativePathSegments(
  path: unknown,
  rules: PathRules = {},
):
  | { readonly ok: true; readonly segments: readonly string[] }
  | { readonly ok: false; readonly why: PathRefusal } {
  const refuse = (why: PathRefusal) => ({ ok: false as const, why });
  if (typeof path !== 'string' || path.length === 0) return refuse('empty');
  if (path.length > (rules.maxLength ?? 1024)) return refuse('too-long');
  if (CONTROL.test(path)) return refuse('control-character');
  if (INVISIBLE.test(path)) return refuse('unicode-lookalike');
  if (path.includes('\\')) return refuse('backslash');
  if (path.startsWith('/') || path.startsWith('~')) return refuse('absolute');
  if (/^[A-Za-z]:/.test(path)) return refuse('absolute');
  if (path.includes(':')) return refuse('colon');
  if (ENCODED.test(path)) return refuse('encoded-separator');
  if (path.normalize('NFKC') !== path) return refuse('unicode-lookalike');
  const segments = path.split('/');
  if (segments.length > (rules.maxDepth ?? 32)) return refuse('too-deep');
  for (const segment of segments) {
    if (segment === '.' || segment === '..') return refuse('traversal');
    if (segment.length === 0) return refuse('empty-segment');
    if (segment.startsWith('.') && rules.allowHidden !== true) return refuse('hidden');
    if (/[. ]$/.test(segment)) return refuse('trailing-dot-or-space');
    if (DEVICE.test(segment)) return refuse('device-name');
    if (SHORT_NAME.test(segment)) return refuse('short-name');
  }
  return { ok: true, segments };
}
