import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * How a column gives way when a table is wider than the terminal:
 * - `text`: free text (reasons, notes, tools, principals, resources); shrunk, the widest first,
 *   cells cut with '…'.
 * - `fixed`: short values of a known form (times, states, outcomes, counts); never cut.
 * - `id`: identifiers an operator copies into the next command (case, call and trace ids); never cut.
 * When the `fixed` and `id` columns and the `text` columns at their narrowest still do not fit, the
 * table is printed as one block of `HEADER  value` lines per row instead (see {@link formatTable}).
 */
export type ColumnKind = 'text' | 'fixed' | 'id';

/** One column of a {@link formatTable} table. */
export interface Column {
  readonly header: string;
  /** Numbers read best right-aligned. Default 'left'. */
  readonly align?: 'left' | 'right';
  /**
   * Longer cells are cut to this many characters, ending in '…'. Default: no limit. Ignored for an
   * `id` column, whose values are never cut.
   */
  readonly maxWidth?: number;
  /** Default: {@link inferredKind} of the header. */
  readonly kind?: ColumnKind;
}

/** A cell value; null and undefined print as '-'. */
export type Cell = string | number | boolean | null | undefined;

/** Layout limits for {@link formatTable} and {@link formatFields}. */
export interface LayoutOptions {
  /**
   * The most characters a line may have. Default: the width of the CLI run in progress (see
   * {@link withOutputWidth}), else no limit.
   */
  readonly width?: number;
}

/** Headers of columns holding identifiers a person copies; a column may also say `kind: 'id'`. */
const ID_HEADERS = new Set([
  'CASE',
  'CASE ID',
  'CALL',
  'CALL ID',
  'TRACE',
  'TRACE ID',
  'ID',
  'CHAIN#SEQ',
  'HEAD HASH',
  'TOPIC',
  'SUBJECT',
  'SCHEMA',
]);
/** Headers of columns whose values have a short known form; a column may also say `kind: 'fixed'`. */
const FIXED_HEADERS = new Set([
  'TIME',
  'AT',
  'CREATED',
  'UPDATED',
  'NEXT CHECK',
  'STATE',
  'OUTCOME',
  'STAGE',
  'FROM',
  'TO',
  'STATUS',
  'RESULT',
  'HEAD SEQ',
  'LATEST',
  'VERSIONS',
  'PARTITIONS',
  'REPLICATION',
  'RETENTION.MS',
]);

/**
 * The kind of a column without an explicit `kind`: `id` for the identifier headers (CASE, CALL,
 * TRACE, CHAIN#SEQ, TOPIC, SUBJECT, …), `fixed` for times, states, outcomes and counts, `text` for everything else.
 */
export function inferredKind(column: Column): ColumnKind {
  if (column.kind !== undefined) return column.kind;
  const header = column.header.toUpperCase();
  if (ID_HEADERS.has(header)) return 'id';
  if (FIXED_HEADERS.has(header)) return 'fixed';
  return 'text';
}

/**
 * A `text` column is not shrunk below this, nor below its header (nor is it widened to it). Below
 * that a cell says too little; the table turns into blocks instead.
 */
const TEXT_MIN_WIDTH = 8;

const outputWidth = new AsyncLocalStorage<number>();

/**
 * Runs `work` with `width` as the default line width of every table and field list formatted inside
 * it, including in its awaited continuations; concurrent runs each keep their own width. The CLI
 * wraps each command in it, so a command's tables fit the terminal without passing a width around.
 */
export function withOutputWidth<T>(width: number, work: () => T): T {
  return outputWidth.run(width, work);
}

/** The width from the options, else of the run in progress, else undefined (no limit). */
function widthFor(options: LayoutOptions): number | undefined {
  const width = options.width ?? outputWidth.getStore();
  return width === undefined || !Number.isFinite(width) ? undefined : Math.max(1, Math.floor(width));
}

/**
 * A plain-text table: a header row, a rule of dashes, then one line per row, columns separated by
 * two spaces, trailing spaces trimmed, ending in a newline. An empty `rows` prints the header and
 * rule only (or `(no rows)` when even the headers do not fit the width). Cells pass through {@link printable} first, because audit records and case notes carry
 * text that came from models and callers, and a raw escape sequence must not reach an operator's
 * terminal. Widths count UTF-16 code units (wide characters may misalign; nothing is lost).
 *
 * No line is longer than the width (see {@link LayoutOptions}). A table wider than that first
 * shrinks its `text` columns, the widest first, cutting cells with '…'; `fixed` and `id` cells are
 * never cut. If that is not enough, every row is printed as a block of `HEADER  value` lines
 * (records separated by a blank line), values cut to the width with '…' except `id` values, which
 * are broken over as many lines as they need. The text layout is for people: scripts use `--json`.
 */
export function formatTable(
  columns: readonly Column[],
  rows: readonly (readonly Cell[])[],
  options: LayoutOptions = {},
): string {
  const kinds = columns.map(inferredKind);
  const text = rows.map((row) =>
    columns.map((col, i) => cut(printable(cellText(row[i])), kinds[i] === 'id' ? undefined : col.maxWidth)),
  );
  const headers = columns.map((c) => printable(c.header));
  const natural = columns.map((_, i) => Math.max(headers[i]!.length, ...text.map((r) => r[i]!.length)));
  const width = widthFor(options);
  const widths = width === undefined ? natural : fittedWidths(natural, headers, kinds, width);
  if (widths === undefined) return recordBlocks(headers, kinds, text, width!);
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => cut(cell, widths[i]))
      .map((cell, i) => (columns[i]!.align === 'right' ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const header = line(headers);
  const rule = line(widths.map((w) => '-'.repeat(w)));
  return [header, rule, ...text.map(line)].map((l) => `${l}\n`).join('');
}

/**
 * Column widths that fit `width` (separators included): `text` columns shrunk one character at a
 * time, always the widest first, down to their floor; `fixed` and `id` columns keep their width.
 * Undefined when even the floors do not fit.
 */
function fittedWidths(
  natural: readonly number[],
  headers: readonly string[],
  kinds: readonly ColumnKind[],
  width: number,
): number[] | undefined {
  const widths = [...natural];
  const separators = 2 * Math.max(0, widths.length - 1);
  let excess = widths.reduce((a, b) => a + b, 0) + separators - width;
  const floors = natural.map((w, i) =>
    kinds[i] === 'text' ? Math.min(w, Math.max(headers[i]!.length, TEXT_MIN_WIDTH)) : w,
  );
  excess = shrinkWidest(widths, floors, excess);
  return excess > 0 ? undefined : widths;
}

/** Takes up to `excess` characters off `widths`, one at a time from the widest above its floor. */
function shrinkWidest(widths: number[], floors: readonly number[], excess: number): number {
  let left = excess;
  while (left > 0) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++) {
      if (widths[i]! > floors[i]! && (widest === -1 || widths[i]! > widths[widest]!)) widest = i;
    }
    if (widest === -1) return left;
    widths[widest]! -= 1;
    left -= 1;
  }
  return left;
}

/** The rows as `HEADER  value` blocks within `width`; for a table too wide to be one. */
function recordBlocks(
  headers: readonly string[],
  kinds: readonly ColumnKind[],
  rows: readonly (readonly string[])[],
  width: number,
): string {
  if (rows.length === 0) return '(no rows)\n';
  // A header longer than a third of the width is cut so the values keep room.
  const labelWidth = Math.min(Math.max(...headers.map((h) => h.length)), Math.max(1, Math.floor(width / 3)));
  const valueWidth = Math.max(1, width - labelWidth - 2);
  const indent = ' '.repeat(labelWidth + 2);
  const block = (row: readonly string[]): string =>
    row
      .map((value, i) => {
        const label = cut(headers[i]!, labelWidth).padEnd(labelWidth);
        if (kinds[i] !== 'id') return `${label}  ${cut(value, valueWidth)}`.trimEnd();
        return `${label}  ${chunks(value, valueWidth).join(`\n${indent}`)}`.trimEnd();
      })
      .map((l) => `${l}\n`)
      .join('');
  return rows.map(block).join('\n');
}

/** `text` in pieces of at most `size` characters (at least one piece). */
function chunks(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces.length === 0 ? [''] : pieces;
}

/**
 * Label/value lines (`label:  value`), labels padded to one width; for one record's details.
 * Values pass through {@link printable}; multi-line values are indented under their label. No line
 * is longer than the width (see {@link LayoutOptions}): a longer value is wrapped at spaces onto
 * indented lines, and a word longer than the room is broken, so nothing is lost or cut.
 */
export function formatFields(
  fields: readonly (readonly [label: string, value: Cell])[],
  options: LayoutOptions = {},
): string {
  const width = Math.max(0, ...fields.map(([label]) => label.length + 1));
  const limit = widthFor(options);
  const room = limit === undefined ? Infinity : Math.max(1, limit - width - 2);
  const pad = ' '.repeat(width + 2);
  return fields
    .map(([label, value]) => {
      const lines = cellText(value)
        .split('\n')
        .flatMap((l) => wrapLine(printable(l), room));
      return `${`${label}:`.padEnd(width)}  ${lines.join(`\n${pad}`)}`.trimEnd() + '\n';
    })
    .join('');
}

/** `text` in lines of at most `room` characters, broken at spaces where it can be. */
function wrapLine(text: string, room: number): string[] {
  if (text.length <= room) return [text];
  const lines: string[] = [];
  let rest = text;
  while (rest.length > room) {
    const space = rest.lastIndexOf(' ', room);
    const at = space > 0 ? space : room;
    lines.push(rest.slice(0, at).trimEnd());
    rest = rest.slice(space > 0 ? at + 1 : at);
  }
  lines.push(rest);
  return lines;
}

function cellText(value: Cell): string {
  if (value === null || value === undefined || value === '') return '-';
  return String(value);
}

function cut(text: string, max: number | undefined): string {
  if (max === undefined || text.length <= max) return text;
  return max <= 1 ? '…'.slice(0, max) : `${text.slice(0, max - 1)}…`;
}

/**
 * The text with every control character (C0, DEL, C1, and the bidi overrides that can reorder what a
 * terminal shows) written as a visible `\xNN` / `\u{NNNN}` escape, and tabs and newlines as `\t` and
 * `\n`, so one cell stays on one line and cannot drive the terminal.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (ch) => {
    if (ch === '\n') return '\\n';
    if (ch === '\t') return '\\t';
    const code = ch.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}
