import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { argumentsFingerprint, idempotencyKey } from '../../../libs/core/idempotency-key.js';
import {
  DEFAULT_MAX_RESULT_BYTES,
  TRUNCATION_NOTE_KEY,
  truncateOutput,
} from '../../../libs/guards/truncate-output.js';
import { validateOutputStage } from '../../../libs/guards/validate-output.js';
import { makeDeps, makeState, makeTool, runTail } from './stage-harness.js';

const ARGS = { orderId: 'O-5512', amount: 49.99 };
const KEY = idempotencyKey({ tenant: 't1', taskId: 'task-1', step: 0, index: 0 }, 'issue_refund', ARGS);

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

describe('validate-output stage', () => {
  it('strips fields the output schema does not declare (allow-list redaction)', async () => {
    const state = makeState(
      makeTool({
        output: z.object({ customer: z.object({ name: z.string() }), total: z.number() }),
        stateChanging: false,
        retrySafety: { kind: 'read-only' },
      }),
    );
    state.rawOutput = { customer: { name: 'Ada', ssn: '078-05-1120' }, total: 12, apiToken: 'sk-live-123' };
    expect(await validateOutputStage(state, makeDeps())).toEqual({ kind: 'continue' });
    expect(state.output).toEqual({ customer: { name: 'Ada' }, total: 12 });
    expect(JSON.stringify(state.output)).not.toContain('sk-live');
  });

  it('a shape mismatch is BAD_OUTPUT (not retryable) and still completes the record: the effect happened', async () => {
    let runs = 0;
    const deps = makeDeps();
    const tool = makeTool({
      execute: () => {
        runs += 1;
        return Promise.resolve({ orderId: 42, secret: 'do-not-show' });
      },
    });
    const ran = await runTail(makeState(tool), deps);
    expect(ran.endedAt).toBe('validate-output');
    expect(ran.end).toMatchObject({ kind: 'refuse', error: { code: 'BAD_OUTPUT', retryable: false } });
    const message = (ran.end as { error: Error }).error.message;
    expect(message).toContain('orderId');
    expect(message).not.toContain('do-not-show');
    expect(await deps.store.claim(KEY, argumentsFingerprint(ARGS), 'b', 1000)).toMatchObject({
      kind: 'completed',
      stored: { outcome: 'EXECUTION_ERROR', result: { code: 'BAD_OUTPUT' } },
    });
    // A duplicate gets the same refusal from the record; the tool is not run again.
    const dup = await runTail(makeState(tool), deps);
    expect(dup.end).toMatchObject({
      kind: 'finish',
      outcome: 'EXECUTION_ERROR',
      error: { code: 'BAD_OUTPUT' },
    });
    expect(runs).toBe(1);
  });

  it('an oversized output is truncated with a visible note, and the pass decision says so', async () => {
    const tool = makeTool({
      output: z.object({ items: z.array(z.object({ sku: z.string(), name: z.string() })) }),
      stateChanging: false,
      retrySafety: { kind: 'read-only' },
      maxResultBytes: 2_000,
    });
    const state = makeState(tool);
    state.rawOutput = {
      items: Array.from({ length: 200 }, (_, i) => ({ sku: `SKU-${i}`, name: `Item number ${i}` })),
    };
    const result = await validateOutputStage(state, makeDeps());
    expect(result).toEqual({ kind: 'continue', reason: 'output truncated to fit 2000 bytes' });
    const output = state.output as { items: unknown[]; _truncated: string };
    expect(bytes(output)).toBeLessThanOrEqual(2_000);
    expect(output.items.length).toBeGreaterThan(0);
    expect(output.items.length).toBeLessThan(200);
    expect(output.items[0]).toEqual({ sku: 'SKU-0', name: 'Item number 0' });
    expect(output._truncated).toContain(`items: kept ${output.items.length} of 200 items`);
    expect(output._truncated).toMatch(/narrower arguments/);
  });

  it('the duplicate of a truncated call gets the same truncated payload', async () => {
    const deps = makeDeps();
    const tool = makeTool({
      output: z.object({ log: z.string() }),
      maxResultBytes: 1_000,
      execute: () => Promise.resolve({ log: 'x'.repeat(5_000) }),
    });
    const first = await runTail(makeState(tool), deps);
    const dup = await runTail(makeState(tool), deps);
    expect(dup.end).toMatchObject({ kind: 'finish', outcome: 'DUPLICATE', payload: first.state.output });
  });
});

describe('validate-output stage: the BAD_OUTPUT message', () => {
  const refusal = async (output: z.ZodType, raw: unknown, stateChanging = true) => {
    const tool = makeTool({
      output,
      stateChanging,
      ...(stateChanging ? {} : { retrySafety: { kind: 'read-only' } }),
    });
    const state = makeState(tool);
    state.rawOutput = raw;
    const r = await validateOutputStage(state, makeDeps());
    if (r.kind !== 'refuse') throw new Error('expected a refusal');
    return r.error;
  };
  const shape = (where: string) =>
    `The tool's response did not have the shape it promises${where}, so it is not shown.`;

  it('a state-changing tool: the action was carried out, do not repeat it', async () => {
    const error = await refusal(z.object({ orderId: z.string() }), { orderId: 1 });
    expect(error.message).toBe(
      `${shape(' (at orderId)')} The action itself was carried out: do not repeat it; tell the user its result could not be read.`,
    );
  });

  it('a read-only tool: repeating will not help', async () => {
    const error = await refusal(z.object({ orderId: z.string() }), { orderId: 1 }, false);
    expect(error.message).toBe(`${shape(' (at orderId)')} Repeating the same call will not help.`);
  });

  it('names at most three distinct paths, nested ones dotted, the root as (root)', async () => {
    const four = z.object({ a: z.string(), b: z.object({ c: z.string() }), d: z.string(), e: z.string() });
    const error = await refusal(four, { a: 1, b: { c: 1 }, d: 1, e: 1 }, false);
    expect(error.message).toBe(`${shape(' (at a, b.c, d)')} Repeating the same call will not help.`);
    const root = await refusal(z.string(), 5, false);
    expect(root.message).toBe(`${shape(' (at (root))')} Repeating the same call will not help.`);
    const twice = await refusal(z.string().min(3).regex(/x/), 'ab', false);
    expect(twice.message).toBe(`${shape(' (at (root))')} Repeating the same call will not help.`);
  });

  it('a schema that throws while parsing is BAD_OUTPUT too, with no path', async () => {
    const throwing = z.string().transform(() => {
      throw new Error('transform bug');
    });
    const error = await refusal(throwing, 'x', false);
    expect(error).toMatchObject({ code: 'BAD_OUTPUT', retryable: false });
    expect(error.message).toBe(`${shape('')} Repeating the same call will not help.`);
  });

  it('refuses INTERNAL when run before the tool was resolved', async () => {
    const state = makeState(makeTool());
    const unresolved = { ...state, tool: undefined };
    expect(await validateOutputStage(unresolved, makeDeps())).toMatchObject({
      kind: 'refuse',
      error: { code: 'INTERNAL', message: 'Output validation ran before the tool was resolved.' },
    });
  });

  it('keeps outputs up to the default budget whole', async () => {
    const state = makeState(
      makeTool({
        output: z.object({ log: z.string() }),
        stateChanging: false,
        retrySafety: { kind: 'read-only' },
      }),
    );
    state.rawOutput = { log: 'x'.repeat(DEFAULT_MAX_RESULT_BYTES - 20) };
    expect(await validateOutputStage(state, makeDeps())).toEqual({ kind: 'continue' });
    state.rawOutput = { log: 'x'.repeat(DEFAULT_MAX_RESULT_BYTES) };
    expect(await validateOutputStage(state, makeDeps())).toEqual({
      kind: 'continue',
      reason: `output truncated to fit ${DEFAULT_MAX_RESULT_BYTES} bytes`,
    });
  });
});

describe('truncateOutput', () => {
  it('returns an output within budget unchanged', () => {
    const value = { a: [1, 2, 3], b: 'short' };
    expect(truncateOutput(value, 1_000)).toEqual({
      value,
      truncated: false,
      originalBytes: bytes(value),
      bytes: bytes(value),
    });
  });

  it('shortens long strings on code points and marks the cut', () => {
    const out = truncateOutput({ text: '😀'.repeat(2_000) }, 800);
    const text = (out.value as { text: string }).text;
    expect(out.truncated).toBe(true);
    expect(text.endsWith('…')).toBe(true);
    // No lone surrogate: a pair was never split.
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)).toBe(false);
    expect(out.note).toMatch(/text: kept \d+ of 2000 characters/);
  });

  it('wraps a non-object output so the note can travel with it', () => {
    const out = truncateOutput(
      Array.from({ length: 500 }, (_, i) => i),
      600,
    );
    expect(out.value).toMatchObject({ result: expect.any(Array), [TRUNCATION_NOTE_KEY]: expect.any(String) });
    expect(out.bytes).toBeLessThanOrEqual(600);
  });

  it('falls back to the note alone when nothing can usefully be cut', () => {
    const many = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`field${i}`, i]));
    const out = truncateOutput(many, 1_000);
    expect(Object.keys(out.value as object)).toEqual([TRUNCATION_NOTE_KEY]);
    expect(out.bytes).toBeLessThanOrEqual(1_000);
  });

  it('always fits a budget of 1 KiB or more, and is deterministic', () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'medium' },
        fc.string({ maxLength: 1_500 }),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 40 }),
        fc.dictionary(fc.string({ maxLength: 8 }), tie('value'), { maxKeys: 8 }),
      ),
    })).value;
    // Mixed in: wide arrays and long strings, so a good share of cases exceed the budget.
    const sized = fc.oneof(
      json,
      fc.array(json, { minLength: 20, maxLength: 120 }),
      fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ minLength: 100, maxLength: 3_000 }), {
        maxKeys: 10,
      }),
    );
    let shortened = 0;
    fc.assert(
      fc.property(sized, fc.integer({ min: 1_024, max: 8_192 }), (value, budget) => {
        const a = truncateOutput(value, budget);
        if (a.truncated) shortened += 1;
        const b = truncateOutput(value, budget);
        expect(a).toEqual(b);
        expect(a.bytes).toBeLessThanOrEqual(budget);
        expect(bytes(a.value)).toBe(a.bytes);
        expect(a.truncated).toBe(bytes(value) > budget);
      }),
      { numRuns: 200 },
    );
    // The generator must actually exercise the cutting, not only the pass-through.
    expect(shortened).toBeGreaterThan(10);
  });
});
