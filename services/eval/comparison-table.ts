import type { VariantScore } from './scoring.js';

const percent = (x: number): string => `${(x * 100).toFixed(1)}%`;

/**
 * The comparison table, one row per variant in the given order, as aligned plain text:
 * tool selection, argument fields (over all requests), argument fields when the tool was right,
 * exact calls and extra fields.
 */
export function comparisonTable(scores: readonly VariantScore[]): string {
  const header = [
    'variant',
    'tool selection',
    'argument fields',
    'fields | right tool',
    'exact calls',
    'extra fields',
  ];
  const rows = scores.map((s) => [
    s.variant,
    `${percent(s.toolAccuracy)} (${s.toolCorrect}/${s.requests})`,
    `${percent(s.fieldAccuracy)} (${s.fieldsMatched}/${s.fieldsExpected})`,
    percent(s.fieldAccuracyWhenToolCorrect),
    `${s.exactCalls}/${s.requests}`,
    String(s.extraFields),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The misses of one variant, one line each: wrong tool, or which fields were wrong. */
export function missLines(score: VariantScore): string[] {
  return score.answers.flatMap((a) => {
    if (a.exact) return [];
    if (!a.toolCorrect)
      return [`${a.id}: ${a.answeredTool === null ? 'no tool call' : `wrong tool (${a.answeredTool})`}`];
    const wrong = a.fields
      .filter((f) => f.status !== 'match')
      .map((f) => `${f.field} ${f.status}${f.status === 'mismatch' ? ` (${JSON.stringify(f.actual)})` : ''}`);
    const extra = a.extraFields.map((f) => `extra ${f}`);
    return [`${a.id}: ${[...wrong, ...extra].join(', ')}`];
  });
}
