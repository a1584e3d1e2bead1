import { displaySafe } from '../core/display-text.js';
import type { ToolDefinition } from './tool-definition.js';
import { validateArgumentsNow } from './validate-arguments.js';

/** Longest text a presentation may have unless the caller says otherwise (characters). */
export const DEFAULT_PRESENTATION_MAX_CHARS = 2_000;

/** One argument as a person is shown it. */
export interface PresentedField {
  /** The argument's name, display-safe. */
  readonly name: string;
  /**
   * What the person is shown: a string argument as itself, any other value as its JSON text, made
   * display-safe (hidden and bidirectional characters escaped). A shortened value ends with a marker
   * saying how many characters are not shown; a decisive value is never shortened. A decisive field
   * the call leaves out reads `(not given)`.
   */
  readonly value: string;
  /** On the tool's `decisiveFields`: shown first and in full. */
  readonly decisive: boolean;
}

/** A validated, normalized call as a person sees it. */
export interface PresentedCall {
  readonly tool: string;
  readonly version: string;
  /** Decisive fields first (in the tool's order), then the other visible fields (in input order). */
  readonly fields: readonly PresentedField[];
  /**
   * The whole presentation as plain text, at most `maxChars` long: a heading naming the tool and
   * version, one `name: value` line per field of `fields`, and a line naming the fields withheld
   * from view (present in the call, not on the tool's `auditFields`), whose values are not shown.
   */
  readonly text: string;
}

/** A call ready to be put to a person, or why it cannot be. */
export type Presentation =
  { readonly ok: true; readonly call: PresentedCall } | { readonly ok: false; readonly reason: string };

/**
 * What a presentation reads of a tool definition (any `ToolDefinition` is one): its identity, input
 * schema, audit allow-list and decisive fields.
 */
export type PresentableTool = Pick<
  ToolDefinition,
  'name' | 'version' | 'input' | 'auditFields' | 'decisiveFields'
>;

export interface PresentOptions {
  /** Longest `text` (characters); default {@link DEFAULT_PRESENTATION_MAX_CHARS}. */
  readonly maxChars?: number;
}

/**
 * The one rendering of a tool call for a person to agree to or review — the same text wherever a
 * person is asked (MCP confirmations, the console's approvals and cases), so what they see is what
 * will run.
 *
 * `args` are first validated and normalized with the tool's own input schema
 * ({@link validateArgumentsNow}, the check the pipeline runs): fields the schema does not define are
 * gone, defaults are applied. Invalid arguments are not presented (`ok: false`, the problems in
 * `reason`). The valid call is rendered by {@link presentParsedCall}. Pure.
 */
export function presentCall(
  tool: PresentableTool,
  args: unknown,
  options: PresentOptions = {},
): Presentation {
  const checked = validateArgumentsNow(tool, args);
  if (!checked.ok) return { ok: false, reason: checked.error.message };
  return presentParsedCall(tool, checked.args, options);
}

/**
 * Renders arguments that are already the output of the tool's input schema (what
 * {@link presentCall} does after validating; for callers that validated asynchronously):
 * - every argument on the tool's `auditFields` is shown; every other argument present is named
 *   on a "withheld" line and its value not shown;
 * - decisive fields (`decisiveFields`) come first, in that order, and are never shortened;
 * - the other shown values are shortened only as far as needed to keep `text` within `maxChars`,
 *   the longest first, each ending with `… (N more characters not shown)`;
 * - every name and value passes through `displaySafe`, so hidden and bidirectional characters read
 *   as escapes and one value is one line.
 * When the decisive fields (with the heading and the withheld line) do not fit within `maxChars`,
 * or not even every field name does, the call is not presented: `ok: false`, with the reason.
 * Pure; throws RangeError for a `maxChars` that is not a positive integer.
 */
export function presentParsedCall(
  tool: PresentableTool,
  parsed: unknown,
  options: PresentOptions = {},
): Presentation {
  const maxChars = options.maxChars ?? DEFAULT_PRESENTATION_MAX_CHARS;
  if (!Number.isSafeInteger(maxChars) || maxChars < 1) {
    throw new RangeError(`maxChars must be a positive integer (got ${String(maxChars)})`);
  }
  const args = isRecord(parsed) ? parsed : {};
  const decisiveNames = tool.decisiveFields ?? [];
  const visible = new Set(tool.auditFields);
  const present = Object.keys(args).filter((key) => args[key] !== undefined);
  const decisive: PresentedField[] = decisiveNames.map((name) => ({
    name: displaySafe(name),
    value: Object.hasOwn(args, name) && args[name] !== undefined ? shownValue(args[name]) : NOT_GIVEN,
    decisive: true,
  }));
  const others = present.filter((key) => visible.has(key) && !decisiveNames.includes(key));
  const withheld = present.filter((key) => !visible.has(key)).map(displaySafe);

  const heading = `Call ${displaySafe(tool.name)} (version ${displaySafe(tool.version)}) with:`;
  const withheldLine = withheld.length === 0 ? [] : [`Withheld from view: ${withheld.join(', ')}`];
  const fixed = [heading, ...decisive.map(line), ...withheldLine];
  const fixedChars = joinedLength(fixed) + others.length; // one newline before each other line
  if (fixedChars > maxChars) {
    const sizes = decisive.map((f) => `${f.name} (${count(f.value.length)} characters)`).join(', ');
    return {
      ok: false,
      reason:
        `${tool.name} cannot be shown within ${count(maxChars)} characters with every decisive field in full ` +
        `(${sizes}; ${count(fixedChars)} characters with the heading), so it is not put to a person.`,
    };
  }
  const fitted = fitValues(
    others.map((key) => ({ name: displaySafe(key), value: shownValue(args[key]) })),
    maxChars - fixedChars,
  );
  if (fitted === undefined) {
    return {
      ok: false,
      reason: `${tool.name} has more fields than can be named within ${count(maxChars)} characters, so it is not put to a person.`,
    };
  }
  const fields = [...decisive, ...fitted.map((f) => ({ ...f, decisive: false }))];
  const text = [heading, ...fields.map(line), ...withheldLine].join('\n');
  return { ok: true, call: { tool: tool.name, version: tool.version, fields, text } };
}

const NOT_GIVEN = '(not given)';

function line(field: { readonly name: string; readonly value: string }): string {
  return `${field.name}: ${field.value}`;
}

function joinedLength(lines: readonly string[]): number {
  return lines.reduce((sum, l) => sum + l.length, 0) + Math.max(0, lines.length - 1);
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function marker(cut: number): string {
  return `… (${count(cut)} more characters not shown)`;
}

/**
 * Shortens values so their lines total at most `budget` characters, keeping each as long as an even
 * share of what is left allows (short values whole, the longest cut most). Undefined when even every
 * value cut to nothing does not fit.
 */
function fitValues(
  fields: readonly { readonly name: string; readonly value: string }[],
  budget: number,
): { readonly name: string; readonly value: string }[] | undefined {
  const sized = fields.map((field, index) => {
    const full = line(field).length;
    const least = Math.min(full, `${field.name}: ${marker(field.value.length)}`.length);
    return { field, index, full, least };
  });
  let spare = budget - sized.reduce((sum, s) => sum + s.least, 0);
  if (spare < 0) return undefined;
  const out: { name: string; value: string }[] = fields.map((f) => ({ ...f }));
  const cuttable = sized
    .filter((s) => s.full > s.least)
    .sort((a, b) => a.full - a.least - (b.full - b.least));
  cuttable.forEach((s, i) => {
    const share = Math.floor(spare / (cuttable.length - i));
    const extra = s.full - s.least;
    if (extra <= share) {
      spare -= extra;
      return;
    }
    const value = s.field.value;
    const keep = safeCut(value, share);
    out[s.index] = { name: s.field.name, value: `${value.slice(0, keep)}${marker(value.length - keep)}` };
    spare -= line(out[s.index]!).length - s.least;
  });
  return out;
}

/**
 * The longest prefix length at most `max` that splits neither a surrogate pair nor a `\u{…}` escape
 * written by `displaySafe`.
 */
function safeCut(text: string, max: number): number {
  let keep = Math.max(0, Math.min(max, text.length));
  const escape = text.lastIndexOf('\\u{', keep - 1);
  if (escape >= 0 && keep - escape < 11) {
    const close = text.indexOf('}', escape);
    if (close >= keep) keep = escape;
  }
  const last = text.charCodeAt(keep - 1);
  if (keep > 0 && last >= 0xd800 && last <= 0xdbff) keep -= 1;
  return keep;
}

/** A value as a person reads it: strings as themselves, anything else as JSON; display-safe. */
function shownValue(value: unknown): string {
  if (typeof value === 'string') return value === '' ? '""' : displaySafe(value);
  let json: string | undefined;
  try {
    json = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  } catch {
    json = undefined;
  }
  return displaySafe(json ?? String(value));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
