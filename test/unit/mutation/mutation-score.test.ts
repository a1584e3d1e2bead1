import { describe, expect, it } from 'vitest';
import {
  originalText,
  scoreReport,
  type EquivalentMutant,
  type MutationReport,
} from '../../mutation/mutation-score.js';

const SOURCE = ['export function f(a, b) {', '  return a < b ? -1 : 1;', '}'].join('\n');

/** A mutant of `a < b` on line 2 (columns 10–15, 1-based, end exclusive). */
const at = (id: string, status: string, replacement = 'a <= b', mutatorName = 'EqualityOperator') => ({
  id,
  mutatorName,
  replacement,
  status,
  location: { start: { line: 2, column: 10 }, end: { line: 2, column: 15 } },
});

const report = (...mutants: ReturnType<typeof at>[]): MutationReport => ({
  files: { 'libs/f.ts': { source: SOURCE, mutants } },
});

const equivalent = (overrides: Partial<EquivalentMutant> = {}): EquivalentMutant => ({
  file: 'libs/f.ts',
  mutator: 'EqualityOperator',
  original: 'a < b',
  replacement: 'a <= b',
  why: 'the two arguments are never equal here',
  ...overrides,
});

describe('mutation score', () => {
  it('reads the original code a mutant replaces', () => {
    expect(originalText(SOURCE, at('1', 'Survived'))).toBe('a < b');
    const multiline = {
      ...at('2', 'Survived'),
      location: { start: { line: 1, column: 25 }, end: { line: 3, column: 2 } },
    };
    expect(originalText(SOURCE, multiline)).toBe('{\n  return a < b ? -1 : 1;\n}');
  });

  it('counts killed and timed-out mutants as detected, and leaves errors out of the score', () => {
    const scored = scoreReport(
      report(
        at('1', 'Killed'),
        at('2', 'Timeout'),
        at('3', 'Survived', 'true'),
        at('4', 'NoCoverage', 'false'),
        at('5', 'RuntimeError'),
      ),
      [],
    );
    expect(scored.files).toEqual([
      { file: 'libs/f.ts', detected: 2, survived: 1, noCoverage: 1, equivalent: 0, errors: 1, score: 50 },
    ]);
    expect(scored.undetected.map((u) => u.replacement)).toEqual(['true', 'false']);
  });

  it('leaves a listed equivalent mutant out, matched by code rather than by line', () => {
    const scored = scoreReport(report(at('1', 'Killed'), at('2', 'Survived')), [equivalent()]);
    expect(scored.files[0]).toMatchObject({ detected: 1, survived: 0, equivalent: 1, score: 100 });
    expect(scored.stale).toEqual([]);
  });

  it('an entry whose code, replacement or line text no longer matches counts the mutant again, and is stale', () => {
    for (const entry of [
      equivalent({ original: 'a > b' }),
      equivalent({ replacement: 'a >= b' }),
      equivalent({ mutator: 'ConditionalExpression' }),
      equivalent({ file: 'libs/g.ts' }),
      equivalent({ line: 'return b < a' }),
    ]) {
      const scored = scoreReport(report(at('1', 'Killed'), at('2', 'Survived')), [entry]);
      expect(scored.files[0]).toMatchObject({ survived: 1, equivalent: 0, score: 50 });
      expect(scored.stale).toEqual([entry]);
    }
    const byLine = scoreReport(report(at('2', 'Survived')), [equivalent({ line: 'return a < b' })]);
    expect(byLine.files[0]).toMatchObject({ equivalent: 1, score: 100 });
  });

  it('a file with no valid mutant scores 100', () => {
    expect(scoreReport(report(), []).files[0]!.score).toBe(100);
  });
});
