import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineTool, DEFAULT_TIMEOUT_MS } from '../../../libs/registry/define-tool.js';
import { ToolDefinitionError } from '../../../libs/registry/definition-error.js';
import type { ToolDefinitionInput } from '../../../libs/registry/define-tool.js';
import { definitionProblems } from '../../../libs/registry/validate-definition.js';

const base = {
  name: 'ping_service',
  version: '1.0.0',
  description: 'Check whether a service answers. Use before reporting an outage.',
  input: z.object({ service: z.string(), region: z.string().optional() }),
  output: z.object({ up: z.boolean() }),
  scopes: [] as string[],
  owner: 'sre',
  execute: () => Promise.resolve({ up: true }),
} satisfies ToolDefinitionInput<{ service: string; region?: string }, { up: boolean }>;

function definitionError(fn: () => unknown): ToolDefinitionError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ToolDefinitionError) return err;
    throw err;
  }
  throw new Error('expected a ToolDefinitionError');
}

describe('defineTool defaults', () => {
  it('treats an undeclared tool as state-changing with no retry and no retry safety', () => {
    const def = defineTool(base);
    expect(def.stateChanging).toBe(true);
    expect(def.destructive).toBe(false);
    expect(def.retry).toEqual({ maxAttempts: 1, baseDelayMs: 500, maxDelayMs: 8000 });
    expect(def.retrySafety).toEqual({ kind: 'none' });
    expect(def.timeoutMs).toBe(DEFAULT_TIMEOUT_MS);
    expect(def.auditFields).toEqual([]);
  });

  it('gives read-only tools read-only retry safety, and merges a partial retry policy', () => {
    const def = defineTool({ ...base, stateChanging: false, retry: { maxAttempts: 3 } });
    expect(def.retrySafety).toEqual({ kind: 'read-only' });
    expect(def.retry).toEqual({ maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 8000 });
  });

  it('returns a frozen definition whose arrays and policies cannot be edited', () => {
    const scopes = ['ops:read'];
    const def = defineTool({ ...base, scopes, auditFields: ['service'] });
    scopes.push('admin');
    expect(def.scopes).toEqual(['ops:read']);
    expect(Object.isFrozen(def)).toBe(true);
    expect(Object.isFrozen(def.scopes)).toBe(true);
    expect(Object.isFrozen(def.auditFields)).toBe(true);
    expect(Object.isFrozen(def.retry)).toBe(true);
    expect(Object.isFrozen(def.retrySafety)).toBe(true);
    expect(() => ((def as { timeoutMs: number }).timeoutMs = 1)).toThrow(TypeError);
  });

  it('infers argument and output types from the zod schemas', () => {
    const def = defineTool({
      ...base,
      input: z.object({ n: z.int(), tags: z.array(z.string()).optional() }),
      output: z.object({ doubled: z.number() }),
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ n: number; tags?: string[] | undefined }>();
        return Promise.resolve({ doubled: args.n * 2 });
      },
    });
    expectTypeOf(def.execute).parameter(0).toEqualTypeOf<{ n: number; tags?: string[] | undefined }>();
    expectTypeOf(def.execute).returns.resolves.toEqualTypeOf<{ doubled: number }>();
  });
});

type BaseInput = ToolDefinitionInput<{ service: string; region?: string }, { up: boolean }>;

describe('defineTool validation', () => {
  it.each<[string, Partial<BaseInput>, string]>([
    ['a name with a space', { name: 'issue refund' }, 'name must match'],
    ['a name longer than 64', { name: 'x'.repeat(65) }, 'name must match'],
    ['a dotted name', { name: 'orders.lookup' }, 'name must match'],
    ['a non-semver version', { version: 'v2' }, 'version must be MAJOR.MINOR.PATCH'],
    ['a pre-release version', { version: '1.0.0-beta' }, 'version must be MAJOR.MINOR.PATCH'],
    ['an empty description', { description: '  ' }, 'description must say when'],
    ['an empty owner', { owner: '' }, 'owner must name'],
    ['a zero timeout', { timeoutMs: 0 }, 'timeoutMs must be a positive number'],
    ['an audit field that is not an input key', { auditFields: ['token'] }, "auditFields names 'token'"],
    [
      'destructive without state change',
      { destructive: true, stateChanging: false },
      'destructive tool must also',
    ],
    [
      'a read-only tool claiming forwards-key',
      { stateChanging: false, retrySafety: { kind: 'forwards-key' } },
      "must have retrySafety 'read-only'",
    ],
    [
      'a state-changing tool claiming read-only',
      { retrySafety: { kind: 'read-only' } },
      "cannot declare retrySafety 'read-only'",
    ],
    ['zero attempts', { retry: { maxAttempts: 0 } }, 'retry.maxAttempts must be an integer >= 1'],
    ['inverted retry delays', { retry: { baseDelayMs: 100, maxDelayMs: 10 } }, 'baseDelayMs <= maxDelayMs'],
    ['a deprecation without a reason', { deprecated: { reason: '' } }, 'deprecated.reason must say why'],
    [
      'an empty rate-limit bucket list',
      { rateLimit: { capacity: 5, refillPerSecond: 1, per: [] } },
      'rateLimit needs',
    ],
  ])('refuses %s', (_label, patch, message) => {
    const err = definitionError(() => defineTool({ ...base, ...patch }));
    expect(err.problems.join(' ')).toContain(message);
  });

  it('refuses a state-changing tool that retries without a way to make the retry safe', () => {
    const err = definitionError(() => defineTool({ ...base, retry: { maxAttempts: 3 } }));
    expect(err.message).toContain("Invalid tool definition 'ping_service'");
    expect(err.message).toContain("needs retrySafety 'forwards-key' or 'status-check'");
    expect(() =>
      defineTool({ ...base, retry: { maxAttempts: 3 }, retrySafety: { kind: 'forwards-key' } }),
    ).not.toThrow();
    const { execute, ...withoutExecute } = base;
    const checked = defineTool({
      ...withoutExecute,
      retry: { maxAttempts: 3 },
      retrySafety: {
        kind: 'status-check',
        check: () => Promise.resolve({ state: 'not-applied' as const }),
        apply: execute,
      },
    });
    // The pipeline runs a status-check tool's apply and nothing else.
    expect(checked.execute).toBe(execute);
  });

  it('refuses a status-check tool whose effect the executor cannot fence', () => {
    const { execute, ...withoutExecute } = base;
    const check = () => Promise.resolve({ state: 'not-applied' as const });
    const withExecute = definitionError(() =>
      defineTool({ ...base, retrySafety: { kind: 'status-check', check, apply: execute } }),
    );
    expect(withExecute.problems.join(' ')).toContain(
      'a status-check tool declares retrySafety.apply (the one request that makes the effect) instead of execute',
    );
    const noApply = definitionError(() =>
      defineTool({
        ...withoutExecute,
        retrySafety: { kind: 'status-check', check } as unknown as {
          kind: 'status-check';
          check: typeof check;
          apply: typeof execute;
        },
      }),
    );
    expect(noApply.problems.join(' ')).toContain("retrySafety 'status-check' needs an apply function");
    const badSettle = definitionError(() =>
      defineTool({
        ...withoutExecute,
        retrySafety: { kind: 'status-check', check, apply: execute, settleMs: -1 },
      }),
    );
    expect(badSettle.problems.join(' ')).toContain('retrySafety.settleMs must be a finite number >= 0');
  });

  it('refuses an input that is not an object schema', () => {
    const err = definitionError(() =>
      defineTool({ ...base, input: z.string() as unknown as typeof base.input }),
    );
    expect(err.problems).toEqual([
      'input must be a z.object(...) schema: both providers require an object at the root.',
    ]);
  });

  it('refuses an input JSON Schema cannot express', () => {
    const err = definitionError(() =>
      defineTool({ ...base, input: z.object({ when: z.date() }), auditFields: [] }),
    );
    expect(err.problems.join(' ')).toContain('cannot be expressed as JSON Schema');
  });

  it('lists every problem at once', () => {
    const err = definitionError(() =>
      defineTool({ ...base, name: 'bad name', version: '1', description: '' }),
    );
    expect(err.problems).toHaveLength(3);
  });

  it('accepts an input already wrapped in z.preprocess and still finds its keys', () => {
    const input = z.preprocess((v) => v, z.object({ service: z.string() }));
    const def = defineTool({ ...base, input, auditFields: ['service'] });
    expect(definitionProblems(def)).toEqual([]);
    expect(def.input.safeParse({ service: 'db' }).success).toBe(true);
  });
});
