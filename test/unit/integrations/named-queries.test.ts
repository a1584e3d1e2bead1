import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineNamedQuery, namedQueryChoice } from '../../../libs/integrations/named-queries.js';
import { REPORT_QUERIES } from '../../../services/catalog/tools/run-report-query.js';

const ok = {
  description: 'x',
  params: { id: z.string() },
  sql: 'SELECT 1 FROM t WHERE tenant = $1 AND id = $2 LIMIT 10',
  values: (p: { id: string }) => [p.id],
  row: z.object({}),
  maxRows: 10,
};

describe('defineNamedQuery', () => {
  it('accepts a tenant-scoped, single, limited statement and counts its placeholders', () => {
    expect(defineNamedQuery('ok', ok).placeholders).toBe(2);
  });

  it.each([
    ['a placeholder gap', 'SELECT 1 FROM t WHERE tenant = $1 AND id = $3 LIMIT 1', /\$2 is unused/],
    ['no tenant placeholder', 'SELECT 1 FROM t WHERE id = $2 LIMIT 1', /\$1/],
    ['two statements', 'SELECT 1 FROM t WHERE tenant = $1 LIMIT 1; DELETE FROM t', /one statement/],
    ['no LIMIT', 'SELECT 1 FROM t WHERE tenant = $1', /LIMIT/],
  ])('refuses %s', (_what, sql, why) => {
    expect(() => defineNamedQuery('bad', { ...ok, sql })).toThrow(why);
  });

  it('refuses a non-positive row cap', () => {
    expect(() => defineNamedQuery('bad', { ...ok, maxRows: 0 })).toThrow(/maxRows/);
  });
});

describe('the report queries', () => {
  it('are all defined once at import, scoped by $1 and never built from parameters', () => {
    expect(REPORT_QUERIES.map((q) => q.name)).toEqual([
      'filings_for_period',
      'filer_history',
      'filers_by_name',
      'totals_by_form',
    ]);
    for (const q of REPORT_QUERIES) {
      expect(q.sql).toMatch(/tenant_id = \$1/);
      expect(Object.isFrozen(q)).toBe(true);
    }
  });

  it('bind parameters as values: LIKE wildcards typed by the user are escaped, quotes untouched', () => {
    const byName = REPORT_QUERIES[2];
    expect(byName.name).toBe('filers_by_name');
    expect(byName.values({ name_contains: "50%_O'Brien\\", limit: 5 })).toEqual(["50\\%\\_O'Brien\\\\", 5]);
  });

  it('the choice schema refuses unknown names and extra keys', () => {
    const choice = namedQueryChoice(REPORT_QUERIES);
    expect(choice.safeParse({ query: 'totals_by_form', period: '2025-Q2' }).success).toBe(true);
    expect(choice.safeParse({ query: 'totals_by_form', period: '2025-Q2', sql: 'DROP' }).success).toBe(false);
    expect(choice.safeParse({ query: 'nope' }).success).toBe(false);
  });
});
