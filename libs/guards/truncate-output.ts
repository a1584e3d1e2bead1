/** The serialized-output budget when a tool declares none: about 4k tokens of context. */
export const DEFAULT_MAX_RESULT_BYTES = 16 * 1024;

/** The key of the note added to a shortened output. */
export const TRUNCATION_NOTE_KEY = '_truncated';

export interface TruncatedOutput {
  /** The output to use: unchanged when it fit, otherwise shortened and carrying the note. */
  readonly value: unknown;
  readonly truncated: boolean;
  /** Serialized (JSON, UTF-8) size before and after. */
  readonly originalBytes: number;
  readonly bytes: number;
  /** The model-readable note (also stored in the value under `_truncated`), when truncated. */
  readonly note?: string;
}

/**
 * Fits a validated output into `maxBytes` of JSON, deterministically (same input, same result).
 *
 * While too large, the largest array or long string is halved (arrays keep their first items,
 * strings their first characters plus "…"), and every cut is listed in a note telling the model what
 * was left out and how to get more (narrower arguments, a smaller page). The note goes under
 * `_truncated`: added to the output when it is an object, otherwise the output is wrapped as
 * `{ result, _truncated }`. When nothing more can be cut (many small fields), the output is replaced
 * by the note alone. Outputs that fit are returned as they are. A budget smaller than the note
 * itself (a few hundred bytes) cannot be met; the shortest form is returned then.
 */
export function truncateOutput(output: unknown, maxBytes: number): TruncatedOutput {
  const text = JSON.stringify(output);
  if (text === undefined) return { value: output, truncated: false, originalBytes: 0, bytes: 0 };
  const originalBytes = Buffer.byteLength(text, 'utf8');
  if (originalBytes <= maxBytes)
    return { value: output, truncated: false, originalBytes, bytes: originalBytes };

  // A JSON copy: what is cut is exactly what would have been sent, and the caller's value is untouched.
  const work = { root: JSON.parse(text) as unknown };
  const cuts = new Map<string, Cut>();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const victim = largestTrimmable(work);
    if (victim === undefined) break;
    trim(victim, cuts);
    const note = noteFor(cuts, originalBytes, maxBytes);
    const candidate = withNote(work.root, note);
    const bytes = byteSize(candidate);
    if (bytes <= maxBytes) return { value: candidate, truncated: true, originalBytes, bytes, note };
  }
  const note =
    `The output (${originalBytes} bytes) is larger than this tool's ${maxBytes}-byte budget and could not ` +
    `be shortened usefully, so it was left out. ${HOW_TO_GET_MORE}`;
  const value = { [TRUNCATION_NOTE_KEY]: note };
  return { value, truncated: true, originalBytes, bytes: byteSize(value), note };
}

const HOW_TO_GET_MORE =
  'To see more, call again with narrower arguments (a filter, a smaller page or limit).';

/** Strings at or below this length are not cut: halving them saves little and destroys meaning. */
const MIN_STRING_CHARS = 32;
/** Each round halves one node; this bounds pathological inputs (thousands of mid-size strings). */
const MAX_ROUNDS = 10_000;
/** How many cuts the note names before summarising the rest. */
const NOTE_CUTS = 5;

interface Cut {
  readonly kind: 'items' | 'characters';
  kept: number;
  readonly of: number;
}

interface Trimmable {
  readonly path: string;
  readonly parent: Record<string, unknown> | unknown[] | { root: unknown };
  readonly key: string | number;
  readonly node: unknown[] | string;
  readonly size: number;
}

/**
 * The node to halve next: the largest (by serialized size) array of two or more items or long
 * string; only when none is left, the largest one-item array (so `[hugeString]` loses characters
 * before it loses its only item). Ties go to the first in document order.
 */
function largestTrimmable(work: { root: unknown }): Trimmable | undefined {
  let best: Trimmable | undefined;
  let lastResort: Trimmable | undefined;
  const consider = (candidate: Trimmable, primary: boolean): void => {
    if (primary) {
      if (best === undefined || candidate.size > best.size) best = candidate;
    } else if (lastResort === undefined || candidate.size > lastResort.size) {
      lastResort = candidate;
    }
  };
  const visit = (node: unknown, parent: Trimmable['parent'], key: string | number, path: string): number => {
    if (typeof node === 'string') {
      const size = byteSize(node);
      if (node.length > MIN_STRING_CHARS) consider({ path, parent, key, node, size }, true);
      return size;
    }
    if (Array.isArray(node)) {
      let size = 2 + Math.max(0, node.length - 1);
      node.forEach((item, i) => {
        size += visit(item, node, i, `${path}[${i}]`);
      });
      if (node.length > 0) consider({ path, parent, key, node, size }, node.length > 1);
      return size;
    }
    if (node !== null && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      let size = 2;
      for (const [k, child] of Object.entries(record)) {
        size += byteSize(k) + 2 + visit(child, record, k, path === '' ? k : `${path}.${k}`);
      }
      return size;
    }
    return byteSize(node);
  };
  visit(work.root, work, 'root', '');
  return best ?? lastResort;
}

function trim(victim: Trimmable, cuts: Map<string, Cut>): void {
  const { node } = victim;
  const kind = typeof node === 'string' ? 'characters' : 'items';
  const length = typeof node === 'string' ? [...node].length : node.length;
  let cut = cuts.get(victim.path);
  if (cut === undefined) {
    cut = { kind, kept: length, of: length };
    cuts.set(victim.path, cut);
  }
  const keep = Math.floor(length / 2);
  let replacement: unknown[] | string;
  if (typeof node === 'string') {
    // Cut on code points, so a surrogate pair is never split; the ellipsis shows the cut in place.
    const chars = [...node];
    const stop = chars[chars.length - 1] === '…' ? chars.length - 1 : chars.length;
    const kept = Math.max(MIN_STRING_CHARS / 2, Math.floor(stop / 2));
    replacement = `${chars.slice(0, kept).join('')}…`;
    cut.kept = kept;
  } else {
    replacement = node.slice(0, keep);
    cut.kept = keep;
  }
  (victim.parent as Record<string | number, unknown>)[victim.key] = replacement;
}

function noteFor(cuts: Map<string, Cut>, originalBytes: number, maxBytes: number): string {
  const parts = [...cuts].slice(0, NOTE_CUTS).map(([path, cut]) => {
    const where = path === '' ? 'the result' : path;
    return `${where}: kept ${cut.kept} of ${cut.of} ${cut.kind}`;
  });
  if (cuts.size > NOTE_CUTS) parts.push(`and ${cuts.size - NOTE_CUTS} more fields shortened`);
  return (
    `Output shortened to fit this tool's ${maxBytes}-byte budget (it was ${originalBytes} bytes): ` +
    `${parts.join('; ')}. ${HOW_TO_GET_MORE}`
  );
}

function withNote(root: unknown, note: string): unknown {
  if (root !== null && typeof root === 'object' && !Array.isArray(root)) {
    return { ...(root as Record<string, unknown>), [TRUNCATION_NOTE_KEY]: note };
  }
  return { result: root, [TRUNCATION_NOTE_KEY]: note };
}

function byteSize(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}
