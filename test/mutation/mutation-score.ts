import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** The part of Stryker's JSON report (mutation-testing-report-schema) the gate reads. */
const position = z.object({ line: z.number(), column: z.number() });
const mutantSchema = z.object({
  id: z.string(),
  mutatorName: z.string(),
  replacement: z.string().optional(),
  status: z.string(),
  location: z.object({ start: position, end: position }),
});
const reportSchema = z.object({
  files: z.record(z.string(), z.object({ source: z.string(), mutants: z.array(mutantSchema) })),
});
export type MutationReport = z.infer<typeof reportSchema>;
type ReportedMutant = z.infer<typeof mutantSchema>;

/**
 * A mutant judged equivalent: no test can tell it from the original, because the behaviour the
 * module promises is the same. It is found by its file, mutator, the original code it replaces and the
 * replacement (and, where that is ambiguous, text of its line), not by line number, so an edit
 * elsewhere in the file keeps the judgement; an edit of
 * that code itself drops it, and the mutant counts again until someone judges it anew.
 */
const equivalentSchema = z.object({
  file: z.string(),
  mutator: z.string(),
  original: z.string(),
  replacement: z.string(),
  /** Text the mutant's first line must contain, when the same original occurs more than once. */
  line: z.string().optional(),
  why: z.string().min(10),
});
export type EquivalentMutant = z.infer<typeof equivalentSchema>;

export function readReport(path: string): MutationReport {
  return reportSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
}

export function readEquivalents(path: string): EquivalentMutant[] {
  return z.array(equivalentSchema).parse(JSON.parse(readFileSync(path, 'utf8')));
}

/** Stryker statuses that count as detected, and those left out of the score as invalid. */
const DETECTED = new Set(['Killed', 'Timeout']);
const INVALID = new Set(['CompileError', 'RuntimeError', 'Ignored', 'Pending']);

export interface FileScore {
  readonly file: string;
  readonly detected: number;
  readonly survived: number;
  readonly noCoverage: number;
  readonly equivalent: number;
  readonly errors: number;
  /** detected / (detected + survived + noCoverage), in percent; 100 for a file with no valid mutant. */
  readonly score: number;
}

export interface Scored {
  readonly files: readonly FileScore[];
  /** The undetected mutants that are not listed as equivalent, for the report. */
  readonly undetected: readonly {
    file: string;
    line: number;
    mutator: string;
    original: string;
    replacement: string;
  }[];
  /** Listed equivalents that match no surviving mutant (the code changed, or a test kills it now). */
  readonly stale: readonly EquivalentMutant[];
}

/** The source text a mutant replaces (lines and columns in the report are 1-based). */
export function originalText(source: string, mutant: ReportedMutant): string {
  const lines = source.split('\n');
  const { start, end } = mutant.location;
  if (start.line === end.line) return lines[start.line - 1]!.slice(start.column - 1, end.column - 1);
  const first = lines[start.line - 1]!.slice(start.column - 1);
  const middle = lines.slice(start.line, end.line - 1);
  const last = lines[end.line - 1]!.slice(0, end.column - 1);
  return [first, ...middle, last].join('\n');
}

interface Candidate {
  readonly file: string;
  readonly mutator: string;
  readonly original: string;
  readonly replacement: string;
  readonly lineText: string;
}

const matches = (e: EquivalentMutant, c: Candidate): boolean =>
  e.file === c.file &&
  e.mutator === c.mutator &&
  e.original === c.original &&
  e.replacement === c.replacement &&
  (e.line === undefined || c.lineText.includes(e.line));

/** Per-file scores with the listed equivalent mutants left out of them. */
export function scoreReport(report: MutationReport, equivalents: readonly EquivalentMutant[]): Scored {
  const used = new Set<EquivalentMutant>();
  const undetected: Scored['undetected'][number][] = [];
  const files = Object.entries(report.files)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([file, { source, mutants }]): FileScore => {
      let detected = 0;
      let survived = 0;
      let noCoverage = 0;
      let equivalent = 0;
      let errors = 0;
      for (const mutant of mutants) {
        if (DETECTED.has(mutant.status)) {
          detected += 1;
          continue;
        }
        if (INVALID.has(mutant.status)) {
          errors += 1;
          continue;
        }
        const original = originalText(source, mutant);
        const replacement = mutant.replacement ?? '';
        const lineText = source.split('\n')[mutant.location.start.line - 1] ?? '';
        const candidate = { file, mutator: mutant.mutatorName, original, replacement, lineText };
        const listed = equivalents.find((e) => matches(e, candidate));
        if (listed !== undefined) {
          used.add(listed);
          equivalent += 1;
          continue;
        }
        if (mutant.status === 'NoCoverage') noCoverage += 1;
        else survived += 1;
        undetected.push({
          file,
          line: mutant.location.start.line,
          mutator: mutant.mutatorName,
          original,
          replacement,
        });
      }
      const valid = detected + survived + noCoverage;
      return {
        file,
        detected,
        survived,
        noCoverage,
        equivalent,
        errors,
        score: valid === 0 ? 100 : (100 * detected) / valid,
      };
    });
  return { files, undetected, stale: equivalents.filter((e) => !used.has(e)) };
}
