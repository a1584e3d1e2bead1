/** One column of a {@link formatTable} table. */
export interface Column {
  readonly header: string;
  /** Numbers read best right-aligned. Default 'left'. */
  readonly align?: 'left' | 'right';
  /** Longer cells are cut to this many characters, ending in '…'. Default: no limit. */
  readonly maxWidth?: number;
}

/** A cell value; null and undefined print as '-'. */
export type Cell = string | number | boolean | null | undefined;

/**
 * A plain-text table: a header row, a rule of dashes, then one line per row, columns separated by
 * two spaces, trailing spaces trimmed, ending in a newline. An empty `rows` prints the header and
 * rule only. Cells pass through {@link printable} first, because audit records and case notes carry
 * text that came from models and callers, and a raw escape sequence must not reach an operator's
 * terminal. Widths count UTF-16 code units (wide characters may misalign; nothing is lost).
 */
export function formatTable(columns: readonly Column[], rows: readonly (readonly Cell[])[]): string {
  const text = rows.map((row) => columns.map((col, i) => cut(printable(cellText(row[i])), col.maxWidth)));
  const widths = columns.map((col, i) => Math.max(col.header.length, ...text.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (columns[i]!.align === 'right' ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const header = line(columns.map((c) => printable(c.header)));
  const rule = line(widths.map((w) => '-'.repeat(w)));
  return [header, rule, ...text.map(line)].map((l) => `${l}\n`).join('');
}

/**
 * Label/value lines (`label:  value`), labels padded to one width; for one record's details.
 * Values pass through {@link printable}; multi-line values are indented under their label.
 */
export function formatFields(fields: readonly (readonly [label: string, value: Cell])[]): string {
  const width = Math.max(0, ...fields.map(([label]) => label.length + 1));
  return fields
    .map(([label, value]) => {
      const lines = cellText(value)
        .split('\n')
        .map((l) => printable(l));
      const pad = ' '.repeat(width + 2);
      return `${`${label}:`.padEnd(width)}  ${lines.join(`\n${pad}`)}`.trimEnd() + '\n';
    })
    .join('');
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
