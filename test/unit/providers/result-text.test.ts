import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OUTCOMES } from '../../../libs/core/outcome.js';
import type { ToolCallResult } from '../../../libs/core/types.js';
import { modelReadableResult, UNRESOLVED_MESSAGE } from '../../../libs/providers/index.js';

const base = { callId: 'c1', tool: 'issue_refund', toolInvocations: 1 } as const;

describe('modelReadableResult', () => {
  it('returns the payload JSON for SUCCESS and DUPLICATE', () => {
    for (const outcome of ['SUCCESS', 'DUPLICATE'] as const) {
      const r = modelReadableResult({ ...base, outcome, payload: { refund_id: 'R-1', amount: 49.99 } });
      expect(r).toEqual({ text: '{"refund_id":"R-1","amount":49.99}', isError: false });
    }
    expect(modelReadableResult({ ...base, outcome: 'SUCCESS' })).toEqual({
      text: '{"ok":true}',
      isError: false,
    });
    expect(modelReadableResult({ ...base, outcome: 'SUCCESS', payload: 'done' }).text).toBe('"done"');
  });

  it('writes errors as {error:{code,message,retryable,retry_after_ms?,suggested_fix?}}', () => {
    const r = modelReadableResult({
      ...base,
      outcome: 'RATE_LIMITED',
      error: {
        code: 'RATE_LIMITED',
        message: 'Too many refunds for this user.',
        retryable: true,
        retryAfterMs: 1200,
        suggestedFix: 'Wait, then retry once.',
      },
      toolInvocations: 0,
    });
    expect(r.isError).toBe(true);
    expect(JSON.parse(r.text)).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message: 'Too many refunds for this user.',
        retryable: true,
        retry_after_ms: 1200,
        suggested_fix: 'Wait, then retry once.',
      },
    });
    const plain = modelReadableResult({
      ...base,
      outcome: 'UNAUTHORIZED',
      error: { code: 'UNAUTHORIZED', message: 'Not allowed.', retryable: false },
    });
    expect(JSON.parse(plain.text)).toEqual({
      error: { code: 'UNAUTHORIZED', message: 'Not allowed.', retryable: false },
    });
  });

  it('presents UNRESOLVED as unknown and still running, never as an error', () => {
    const r = modelReadableResult({
      ...base,
      outcome: 'UNRESOLVED',
      error: { code: 'UNRESOLVED', message: 'downstream timed out: request failed', retryable: true },
    });
    expect(r.isError).toBe(false);
    const body = JSON.parse(r.text) as Record<string, unknown>;
    expect(body).toEqual({
      status: 'outcome_unknown',
      code: 'UNRESOLVED',
      message: UNRESOLVED_MESSAGE,
      retryable: false,
    });
    expect(UNRESOLVED_MESSAGE).toMatch(/may still be executing/);
    expect(UNRESOLVED_MESSAGE).toMatch(/Do not call it again/);
    expect(UNRESOLVED_MESSAGE).toMatch(/reconciled/);
    expect(r.text).not.toMatch(/fail/i);
  });

  it('still answers with a structured error when the result is broken', () => {
    const missing = modelReadableResult({ ...base, outcome: 'EXECUTION_ERROR' });
    expect(missing.isError).toBe(true);
    expect(JSON.parse(missing.text)).toMatchObject({ error: { code: 'INTERNAL', retryable: false } });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const payload of [10n, cyclic]) {
      const r = modelReadableResult({ ...base, outcome: 'SUCCESS', payload });
      expect(r.isError).toBe(true);
      expect(JSON.parse(r.text)).toMatchObject({ error: { code: 'INTERNAL' } });
    }
  });

  it('always yields parseable JSON text and flags errors only for definite failures (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...OUTCOMES),
        fc.anything({ withBigInt: true, withMap: true }),
        fc.option(
          fc.record({
            code: fc.constant('SERVER_ERROR' as const),
            message: fc.string(),
            retryable: fc.boolean(),
          }),
        ),
        (outcome, payload, error) => {
          const result: ToolCallResult = { ...base, outcome, payload, ...(error ? { error } : {}) };
          const r = modelReadableResult(result);
          expect(() => JSON.parse(r.text) as unknown).not.toThrow();
          if (outcome === 'UNRESOLVED') expect(r.isError).toBe(false);
          if (outcome !== 'SUCCESS' && outcome !== 'DUPLICATE' && outcome !== 'UNRESOLVED') {
            expect(r.isError).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
