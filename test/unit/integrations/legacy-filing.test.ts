import { describe, expect, it } from 'vitest';
import { errorForLegacyFault } from '../../../services/legacy-filing/legacy-faults.js';
import { loadLegacyFilingConfig } from '../../../services/legacy-filing/config.js';
import { LegacyFaults } from '../../../services/legacy-filing/faults.js';
import { validateSubmission } from '../../../services/legacy-filing/validate-submission.js';
import { isoFromLegacyTimestamp, legacyTimestamp } from '../../../services/legacy-filing/wire.js';

const NOW = Date.UTC(2025, 7, 15, 10, 30, 0); // 2025-Q3

const body = {
  TenantId: 't1',
  FilerId: '123456789',
  FilerName: '  Acme Ltd ',
  FormType: 'VAT3',
  Period: '2025Q3',
  AmountCents: 1_000,
};

describe('legacy wire format', () => {
  it('round-trips its timestamps', () => {
    expect(legacyTimestamp(NOW)).toBe('20250815103000');
    expect(isoFromLegacyTimestamp('20250815103000')).toBe('2025-08-15T10:30:00.000Z');
  });

  it('validates like the legacy service: field by field, with its own fault codes', () => {
    expect(validateSubmission(body, NOW)).toEqual({ ok: true, filing: { ...body, FilerName: 'Acme Ltd' } });
    expect(validateSubmission({ ...body, FilerId: '12345' }, NOW)).toEqual({ ok: false, fault: 'F101' });
    expect(validateSubmission({ ...body, FormType: 'XX' }, NOW)).toEqual({ ok: false, fault: 'F104' });
    expect(validateSubmission({ ...body, Period: '2025Q4' }, NOW)).toEqual({ ok: false, fault: 'F102' });
    expect(validateSubmission({ ...body, Period: '2025-Q3' }, NOW)).toEqual({ ok: false, fault: 'F102' });
    expect(validateSubmission({ ...body, AmountCents: -1 }, NOW)).toEqual({ ok: false, fault: 'F103' });
    expect(validateSubmission({ ...body, AmountCents: 1.5 }, NOW)).toEqual({ ok: false, fault: 'F103' });
    expect(validateSubmission({ ...body, FilerName: ' ' }, NOW)).toEqual({ ok: false, fault: 'F105' });
    expect(validateSubmission({ nope: true }, NOW)).toEqual({ ok: false, fault: 'F100' });
  });

  it('translates fault codes into the taxonomy once: model-fixable refusals carry a fix', () => {
    for (const code of ['F101', 'F102', 'F103', 'F105']) {
      const err = errorForLegacyFault(code);
      expect(err).toMatchObject({ code: 'CALLER_ERROR', retryable: true });
      expect(err.suggestedFix).toBeDefined();
      expect(err.message).not.toMatch(/F10\d/);
    }
    expect(errorForLegacyFault('F104')).toMatchObject({ code: 'INTERNAL', retryable: false });
    expect(errorForLegacyFault('F999')).toMatchObject({ code: 'CALLER_ERROR', retryable: false });
  });
});

describe('legacy fault switchboard', () => {
  it('draws the same faults for the same seed, at about the configured rates', () => {
    const draw = () => {
      const f = new LegacyFaults({ dropAfterCommit: 0.3, dropBeforeCommit: 0.1 }, 42);
      return Array.from({ length: 2_000 }, () => f.submitFault());
    };
    const a = draw();
    expect(draw()).toEqual(a);
    const dropped = a.filter((x) => x === 'drop-after-commit').length / a.length;
    expect(dropped).toBeGreaterThan(0.25);
    expect(dropped).toBeLessThan(0.35);
    expect(a).toContain('drop-before-commit');
    expect(a).not.toContain('slow');
  });

  it('refuses rates that are not fractions or sum past 1', () => {
    expect(() => new LegacyFaults({ slow: 1.2 })).toThrow(RangeError);
    expect(() => new LegacyFaults({ dropAfterCommit: 0.6, dropBeforeCommit: 0.6 })).toThrow(RangeError);
  });
});

describe('legacy filing service configuration', () => {
  it('parses its environment with loopback defaults', () => {
    const cfg = loadLegacyFilingConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/db' });
    expect(cfg).toMatchObject({
      host: '127.0.0.1',
      port: 7410,
      schema: 'legacy_filing',
      commitWindowMs: 2_000,
      faults: { dropAfterCommit: 0, dropBeforeCommit: 0, slow: 0, statusFailure: 0 },
    });
  });

  it('names every bad variable and never echoes a value', () => {
    let message = '';
    try {
      loadLegacyFilingConfig({
        DATABASE_URL: 'mysql://user:pw-secret@h/db',
        LEGACY_FILING_DROP_AFTER_COMMIT_RATE: '2',
        LEGACY_FILING_SCHEMA: 'Bad-Name',
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/DATABASE_URL/);
    expect(message).toMatch(/LEGACY_FILING_DROP_AFTER_COMMIT_RATE/);
    expect(message).toMatch(/LEGACY_FILING_SCHEMA/);
    expect(message).not.toContain('pw-secret');
    expect(() =>
      loadLegacyFilingConfig({
        DATABASE_URL: 'postgres://x@h/db',
        LEGACY_FILING_DROP_AFTER_COMMIT_RATE: '0.6',
        LEGACY_FILING_SLOW_RATE: '0.6',
      }),
    ).toThrow(/sum to at most 1/);
  });
});
