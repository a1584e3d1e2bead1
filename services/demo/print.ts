/** Where the story writes its lines (stdout in `npm run demo`, an array in tests). */
export type Out = (line: string) => void;

/** A step heading: a rule with the step's title. */
export function heading(out: Out, title: string): void {
  out('');
  out(`━━ ${title} ${'━'.repeat(Math.max(3, 76 - title.length))}`);
}

/** `label` padded to a column, then the value; continuation lines of the value are indented. */
export function field(out: Out, label: string, value: string): void {
  const [first = '', ...rest] = value.split('\n');
  out(`  ${label.padEnd(18)}${first}`);
  for (const line of rest) out(`  ${' '.repeat(18)}${line}`);
}

/** Long JSON is cut so a line stays readable; the cut is marked. */
export function clip(text: string, max = 160): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A plain text table: a header row, a rule and one row per entry, columns padded to fit. */
export function table(out: Out, header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `  ${cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}`;
  out(line(header));
  out(line(widths.map((w) => '─'.repeat(w))));
  for (const row of rows) out(line(row));
}

/** `HH:MM:SS.mmm` in UTC. */
export function clockTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}
