import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argumentsFingerprint, idempotencyKey, taskResourceKey } from '../../../libs/core/idempotency-key.js';
import type { CallCoordinates } from '../../../libs/core/idempotency-key.js';
import { ToolgateError } from '../../../libs/core/errors.js';

const coords = fc.record({
  tenant: fc.string({ minLength: 1, maxLength: 12 }),
  taskId: fc.string({ minLength: 1, maxLength: 12 }),
  step: fc.nat({ max: 1000 }),
  index: fc.nat({ max: 64 }),
});
const tool = fc.string({ minLength: 1, maxLength: 20 });
const args = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }));

function reversedKeys(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse()) {
    Object.defineProperty(out, key, { value: value[key], enumerable: true });
  }
  return out;
}

describe('idempotencyKey', () => {
  it('is versioned and hex', () => {
    const key = idempotencyKey({ tenant: 't1', taskId: 'task-9', step: 2, index: 0 }, 'issue_refund', {
      a: 1,
    });
    expect(key).toMatch(/^tg1:[0-9a-f]{64}$/);
  });

  it('collides for a retry of the same call, even with another key order (property)', () => {
    fc.assert(
      fc.property(coords, tool, args, (ctx, name, a) => {
        const first = idempotencyKey(ctx, name, a);
        // A retry rebuilds the context object and receives the arguments re-parsed.
        const retry = idempotencyKey(
          { ...ctx },
          name,
          reversedKeys(JSON.parse(JSON.stringify(a)) as Record<string, unknown>),
        );
        expect(retry).toBe(first);
      }),
    );
  });

  it('separates two calls with equal arguments at different positions in a turn (property)', () => {
    fc.assert(
      fc.property(coords, tool, args, fc.nat({ max: 64 }), (ctx, name, a, other) => {
        fc.pre(other !== ctx.index);
        expect(idempotencyKey(ctx, name, a)).not.toBe(idempotencyKey({ ...ctx, index: other }, name, a));
      }),
    );
  });

  it('separates calls that differ in any coordinate, tool or argument (property)', () => {
    fc.assert(
      fc.property(coords, coords, tool, tool, args, args, (c1, c2, n1, n2, a1, a2) => {
        const sameCall =
          c1.tenant === c2.tenant &&
          c1.taskId === c2.taskId &&
          c1.step === c2.step &&
          c1.index === c2.index &&
          n1 === n2 &&
          argumentsFingerprint(a1) === argumentsFingerprint(a2);
        expect(idempotencyKey(c1, n1, a1) === idempotencyKey(c2, n2, a2)).toBe(sameCall);
      }),
    );
  });

  it('does not let field boundaries blur (tenant "a:b" vs task "b")', () => {
    const a = idempotencyKey({ tenant: 'a:b', taskId: 'c', step: 1, index: 0 }, 't', {});
    const b = idempotencyKey({ tenant: 'a', taskId: 'b:c', step: 1, index: 0 }, 't', {});
    expect(a).not.toBe(b);
  });

  it('refuses non-JSON arguments with SCHEMA_INVALID and bad coordinates with INTERNAL', () => {
    const ctx: CallCoordinates = { tenant: 't', taskId: 'k', step: 0, index: 0 };
    expect(() => idempotencyKey(ctx, 'x', { amount: NaN })).toThrow(ToolgateError);
    expect(() => idempotencyKey(ctx, 'x', { amount: NaN })).toThrow(/NaN at \$\[5\]\.amount/);
    for (const bad of [
      { ...ctx, tenant: '' },
      { ...ctx, step: -1 },
      { ...ctx, index: 1.5 },
      { ...ctx, taskId: '' },
    ]) {
      try {
        idempotencyKey(bad, 'x', {});
        expect.unreachable();
      } catch (err) {
        expect((err as ToolgateError).code).toBe('INTERNAL');
      }
    }
  });
});

describe('idempotencyKey: malformed coordinates are named', () => {
  const ctx: CallCoordinates = { tenant: 't', taskId: 'k', step: 0, index: 0 };
  const problem = (bad: unknown, toolName = 'x'): string => {
    try {
      idempotencyKey(bad as CallCoordinates, toolName, {});
    } catch (err) {
      expect(err).toBeInstanceOf(ToolgateError);
      expect((err as ToolgateError).code).toBe('INTERNAL');
      return (err as ToolgateError).message;
    }
    throw new Error('expected a refusal');
  };

  it.each([
    ['tenant', { ...ctx, tenant: '' }],
    ['tenant', { ...ctx, tenant: 7 }],
    ['taskId', { ...ctx, taskId: '' }],
    ['taskId', { ...ctx, taskId: null }],
    ['step', { ...ctx, step: -1 }],
    ['step', { ...ctx, step: 0.5 }],
    ['step', { ...ctx, step: Number.MAX_SAFE_INTEGER + 1 }],
    ['index', { ...ctx, index: -1 }],
    ['index', { ...ctx, index: '0' }],
  ])('names %s', (name, bad) => {
    expect(problem(bad)).toBe(`Cannot derive an idempotency key: invalid ${name}.`);
  });

  it('names an empty or missing tool, and every problem at once', () => {
    expect(problem(ctx, '')).toBe('Cannot derive an idempotency key: invalid tool.');
    expect(problem(ctx, null as unknown as string)).toBe('Cannot derive an idempotency key: invalid tool.');
    expect(problem({ tenant: '', taskId: '', step: -1, index: -1 }, '')).toBe(
      'Cannot derive an idempotency key: invalid tenant, taskId, step, index, tool.',
    );
  });

  it('accepts step and index 0 and the largest safe integer', () => {
    expect(idempotencyKey(ctx, 'x', {})).toMatch(/^tg1:/);
    const far = { ...ctx, step: Number.MAX_SAFE_INTEGER, index: Number.MAX_SAFE_INTEGER };
    expect(idempotencyKey(far, 'x', {})).toMatch(/^tg1:[0-9a-f]{64}$/);
  });
});

describe('argumentsFingerprint', () => {
  it('ignores key order and distinguishes different arguments (property)', () => {
    fc.assert(
      fc.property(args, args, (a, b) => {
        expect(argumentsFingerprint(reversedKeys(a))).toBe(argumentsFingerprint(a));
        const equal = JSON.stringify(sortDeep(a)) === JSON.stringify(sortDeep(b));
        expect(argumentsFingerprint(a) === argumentsFingerprint(b)).toBe(equal);
      }),
    );
  });

  it('is a plain 64-char hex digest', () => {
    expect(argumentsFingerprint({ sku: 'SKU-7', qty: 2 })).toMatch(/^[0-9a-f]{64}$/);
    expect(argumentsFingerprint({ qty: 2, sku: 'SKU-7' })).toBe(
      argumentsFingerprint({ sku: 'SKU-7', qty: 2 }),
    );
    expect(argumentsFingerprint({ sku: 'SKU-7', qty: 3 })).not.toBe(
      argumentsFingerprint({ sku: 'SKU-7', qty: 2 }),
    );
  });
});

function sortDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortDeep);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    Object.defineProperty(out, key, {
      value: sortDeep((value as Record<string, unknown>)[key]),
      enumerable: true,
    });
  }
  return out;
}

describe('taskResourceKey', () => {
  it('is `<tenant>:task:<taskId>`, the partition key every writer of a call event agrees on', () => {
    expect(taskResourceKey({ tenant: 't1', taskId: 'task-9' })).toBe('t1:task:task-9');
  });

  it('differs between tasks and between tenants, so unrelated tasks never share a lane by key', () => {
    const keys = new Set([
      taskResourceKey({ tenant: 't1', taskId: 'a' }),
      taskResourceKey({ tenant: 't1', taskId: 'b' }),
      taskResourceKey({ tenant: 't2', taskId: 'a' }),
    ]);
    expect(keys.size).toBe(3);
  });
});
