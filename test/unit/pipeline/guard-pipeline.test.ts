import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { StageDecision } from '../../../libs/core/audit-record.js';
import { REDACTED } from '../../../libs/pipeline/build-audit-record.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { CONTINUE } from '../../../libs/pipeline/stage.js';
import type { PipelineStep, Stage } from '../../../libs/pipeline/stage.js';
import { STAGES } from '../../../libs/guards/stages.js';
import { INGRESS_STAGES } from '../../../libs/pipeline/guard-pipeline.js';

/** The steps an in-process run (its caller vouches for the principal) passes through. */
const TRUSTED_STAGES = STAGES.filter((s) => !INGRESS_STAGES.includes(s.name));
const RESOLVE = TRUSTED_STAGES[0]!;
import { defineTool } from '../../../libs/registry/define-tool.js';
import { call, context, countingRefundTool, harness, principal } from './fixtures.js';
import type { Harness } from './fixtures.js';

let h: Harness | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

function setup(overrides: Parameters<typeof countingRefundTool>[0] = {}) {
  const refund = countingRefundTool(overrides);
  h = harness([refund.tool]);
  return { refund, pipeline: new GuardPipeline(h.deps, STAGES), h };
}

const stageNames = (decisions: readonly StageDecision[]) => decisions.map((d) => `${d.stage}:${d.decision}`);

describe('GuardPipeline: a refusal at each of stages 0-4 never reaches the tool', () => {
  it('stage 0 resolve: unknown tool → UNKNOWN_TOOL with a suggestion, 0 tool calls', async () => {
    const { refund, pipeline } = setup();
    const { result, audit } = await pipeline.run(
      call({ order_id: 'O-1', amount: 5 }, { name: 'issue_refnd' }),
      context(),
    );
    expect(result.outcome).toBe('UNKNOWN_TOOL');
    expect(result.error?.code).toBe('UNKNOWN_TOOL');
    expect(result.error?.retryable).toBe(true);
    expect(result.error?.message).toContain('issue_refund');
    expect(result.toolInvocations).toBe(0);
    expect(refund.calls()).toBe(0);
    expect(stageNames(audit.decisions)).toEqual(['resolve:refuse']);
    expect(audit.decisions[0]?.code).toBe('UNKNOWN_TOOL');
  });

  it('stage 0 resolve: deprecated version → TOOL_DEPRECATED (outcome UNKNOWN_TOOL), 0 tool calls', async () => {
    const { refund, pipeline, h: hh } = setup();
    hh.registry.deprecate('issue_refund', '1.0.0', { reason: 'Replaced by refunds v2.' });
    const { result, audit } = await pipeline.run(
      call({ order_id: 'O-1', amount: 5 }, { version: '1.0.0' }),
      context(),
    );
    expect(result.outcome).toBe('UNKNOWN_TOOL');
    expect(result.error?.code).toBe('TOOL_DEPRECATED');
    expect(refund.calls()).toBe(0);
    expect(audit.decisions.at(-1)).toMatchObject({
      stage: 'resolve',
      decision: 'refuse',
      code: 'TOOL_DEPRECATED',
    });
  });

  it('stage 1 validate-input: bad arguments → SCHEMA_INVALID listing path: message, 0 tool calls', async () => {
    const { refund, pipeline } = setup();
    const { result, audit } = await pipeline.run(call({ order_id: 'O-1', amount: -3, tip: 1 }), context());
    expect(result.outcome).toBe('SCHEMA_INVALID');
    expect(result.error).toMatchObject({ code: 'SCHEMA_INVALID', retryable: true });
    expect(result.error?.message).toContain('amount: must be greater than 0');
    expect(result.error?.message).toContain('tip: unknown field; remove it');
    expect(result.error?.suggestedFix).toBeTruthy();
    expect(refund.calls()).toBe(0);
    expect(stageNames(audit.decisions)).toEqual(['resolve:pass', 'validate-input:refuse']);
  });

  it('stage 2 authorize: missing scope → UNAUTHORIZED, generic message, no fix, 0 tool calls', async () => {
    const { refund, pipeline } = setup();
    const ctx = context({ principal: principal({ scopes: ['orders:read'] }) });
    const { result, audit } = await pipeline.run(call({ order_id: 'O-1', amount: 5 }), ctx);
    expect(result.outcome).toBe('UNAUTHORIZED');
    expect(result.error).toEqual({
      code: 'UNAUTHORIZED',
      message: 'Not authorized to perform this action.',
      retryable: false,
    });
    expect(refund.calls()).toBe(0);
    expect(stageNames(audit.decisions)).toEqual(['resolve:pass', 'validate-input:pass', 'authorize:refuse']);
  });

  it('stage 3 rate-limit: budget spent → RATE_LIMITED with retryAfterMs, the tool ran only within budget', async () => {
    const { refund, pipeline } = setup({
      rateLimit: { capacity: 2, refillPerSecond: 1, per: ['principal'] },
    });
    const outcomes = [];
    for (let i = 0; i < 3; i++) {
      outcomes.push((await pipeline.run(call({ order_id: 'O-1', amount: 5 }), context({ index: i }))).result);
    }
    expect(outcomes.map((r) => r.outcome)).toEqual(['SUCCESS', 'SUCCESS', 'RATE_LIMITED']);
    expect(refund.calls()).toBe(2);
    const refused = outcomes[2]!;
    expect(refused.toolInvocations).toBe(0);
    expect(refused.error?.code).toBe('RATE_LIMITED');
    expect(refused.error?.retryable).toBe(true);
    expect(refused.error?.retryAfterMs).toBeGreaterThan(0);
  });

  it('stage 3 rate-limit: the refused call alone never reaches the tool (count before and after)', async () => {
    const { refund, pipeline } = setup({
      rateLimit: { capacity: 1, refillPerSecond: 0.001, per: ['tenant'] },
    });
    await pipeline.run(call({ order_id: 'O-1', amount: 5 }), context({ index: 0 }));
    const before = refund.calls();
    const { result, audit } = await pipeline.run(call({ order_id: 'O-1', amount: 5 }), context({ index: 1 }));
    expect(before).toBe(1);
    expect(refund.calls()).toBe(1);
    expect(result.outcome).toBe('RATE_LIMITED');
    expect(audit.decisions.at(-1)).toMatchObject({
      stage: 'rate-limit',
      decision: 'refuse',
      code: 'RATE_LIMITED',
    });
  });

  it('stage 4 business-rules: over the role limit → POLICY_VIOLATION with the reason, 0 tool calls', async () => {
    const { refund, pipeline } = setup();
    const { result, audit } = await pipeline.run(call({ order_id: 'O-5512', amount: 499.9 }), context());
    expect(result.outcome).toBe('POLICY_VIOLATION');
    expect(result.error).toMatchObject({
      code: 'POLICY_VIOLATION',
      message: 'Refunds above $50 need a manager (asked: $499.9).',
      retryable: true,
      suggestedFix: 'Route it to a manager.',
    });
    expect(refund.calls()).toBe(0);
    expect(stageNames(audit.decisions)).toEqual([
      'resolve:pass',
      'validate-input:pass',
      'authorize:pass',
      'rate-limit:pass',
      'business-rules:refuse',
    ]);
  });
});

describe('GuardPipeline: results and audit records', () => {
  it('a call that passes every stage succeeds once, with one audit record of all eight decisions', async () => {
    const { refund, pipeline } = setup();
    const { result, audit } = await pipeline.run(
      call({ order_id: 'O-5512', amount: 49.99, reason: 'blender arrived broken' }),
      context(),
    );
    expect(result).toMatchObject({
      outcome: 'SUCCESS',
      payload: { refund_id: 'R-1', amount: 49.99 },
      toolInvocations: 1,
    });
    expect(refund.calls()).toBe(1);
    expect(audit.decisions.map((d) => d.stage)).toEqual(TRUSTED_STAGES.map((s) => s.name));
    expect(audit.decisions.every((d) => d.decision === 'pass')).toBe(true);
    expect(audit).toMatchObject({
      callId: result.callId,
      tool: 'issue_refund',
      toolVersion: '1.0.0',
      principalId: 'agent-7',
      tenant: 't1',
      outcome: 'SUCCESS',
      arguments: { order_id: 'O-5512', amount: 49.99, reason: REDACTED },
      result: { refund_id: 'R-1', amount: 49.99 },
    });
    expect(audit.idempotencyKey).toMatch(/^tg1:/);
    expect(result.idempotencyKey).toBe(audit.idempotencyKey);
    expect(audit.attempts).toHaveLength(1);
  });

  it('an unknown tool is audited with every argument value redacted', async () => {
    const { pipeline } = setup();
    const { audit } = await pipeline.run(
      call({ order_id: 'O-1', card_number: '4111111111111111' }, { name: 'wire_money' }),
      context(),
    );
    expect(audit.arguments).toEqual({ order_id: REDACTED, card_number: REDACTED });
    expect(audit.toolVersion).toBeUndefined();
    expect(audit.result).toBeUndefined();
  });

  it('stage durations come from the injected clock', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const clock = h.deps.clock;
    const slow: Stage = {
      name: 'business-rules',
      run: async () => {
        await h!.clock.advance(250);
        return CONTINUE;
      },
    };
    const pipeline = new GuardPipeline(h.deps, [RESOLVE, slow]);
    const started = clock.now();
    const { audit } = await pipeline.run(call({ order_id: 'O-1', amount: 5 }), context());
    expect(audit.decisions.map((d) => d.durationMs)).toEqual([0, 250]);
    expect(audit.startedAtMs).toBe(started);
    expect(audit.finishedAtMs).toBe(started + 250);
  });

  it('a stage that throws becomes a classified refusal of that stage; later stages do not run', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    let laterRan = false;
    const stages: PipelineStep[] = [
      RESOLVE,
      {
        name: 'authorize',
        run: () => Promise.reject(Object.assign(new Error('db down'), { code: 'ECONNREFUSED' })),
      },
      { name: 'rate-limit', run: () => ((laterRan = true), Promise.resolve(CONTINUE)) },
    ];
    const { result, audit } = await new GuardPipeline(h.deps, stages).run(
      call({ order_id: 'O-1', amount: 5 }),
      context(),
    );
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error?.code).toBe('SERVER_ERROR');
    expect(result.error?.message).not.toContain('db down');
    expect(laterRan).toBe(false);
    expect(audit.decisions.at(-1)).toMatchObject({
      stage: 'authorize',
      decision: 'refuse',
      code: 'SERVER_ERROR',
    });
  });

  it('a stage that returns no decision is refused as INTERNAL', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const broken = { name: 'validate-input', run: () => Promise.resolve(undefined) } as unknown as Stage;
    const { result } = await new GuardPipeline(h.deps, [RESOLVE, broken]).run(
      call({ order_id: 'O-1', amount: 5 }),
      context(),
    );
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error?.code).toBe('INTERNAL');
  });

  it('a throw after a state-changing tool ran is UNRESOLVED, never a failure', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const stages: PipelineStep[] = [
      RESOLVE,
      {
        name: 'execute',
        run: (state) => {
          state.toolInvocations += 1;
          return Promise.reject(new Error('socket closed after write'));
        },
      },
    ];
    const { result, audit } = await new GuardPipeline(h.deps, stages).run(
      call({ order_id: 'O-1', amount: 5 }),
      context(),
    );
    expect(result.outcome).toBe('UNRESOLVED');
    expect(result.error?.code).toBe('UNRESOLVED');
    expect(result.toolInvocations).toBe(1);
    expect(audit.outcome).toBe('UNRESOLVED');
  });

  it('the same throw after a read-only tool ran is an ordinary classified error', async () => {
    const lookup = defineTool({
      name: 'get_order',
      version: '1.0.0',
      description: 'Read one order by id.',
      input: z.object({ order_id: z.string() }),
      output: z.object({ status: z.string() }),
      scopes: [],
      owner: 'orders',
      stateChanging: false,
      execute: () => Promise.resolve({ status: 'shipped' }),
    });
    h = harness([lookup]);
    const stages: PipelineStep[] = [
      RESOLVE,
      {
        name: 'execute',
        run: (state) => {
          state.toolInvocations += 1;
          return Promise.reject(new Error('boom'));
        },
      },
    ];
    const { result } = await new GuardPipeline(h.deps, stages).run(
      call({ order_id: 'O-1' }, { name: 'get_order' }),
      context(),
    );
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error?.code).toBe('INTERNAL');
  });

  it('a finish is recorded as a short-circuit and its outcome and payload are returned', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const stages: PipelineStep[] = [
      RESOLVE,
      {
        name: 'idempotency',
        run: () =>
          Promise.resolve({
            kind: 'finish',
            outcome: 'DUPLICATE',
            payload: { refund_id: 'R-0' },
            reason: 'duplicate',
          }),
      },
    ];
    const { result, audit } = await new GuardPipeline(h.deps, stages).run(
      call({ order_id: 'O-1', amount: 5 }),
      context(),
    );
    expect(result).toMatchObject({ outcome: 'DUPLICATE', payload: { refund_id: 'R-0' }, toolInvocations: 0 });
    expect(audit.decisions.at(-1)).toMatchObject({
      stage: 'idempotency',
      decision: 'short-circuit',
      reason: 'duplicate',
    });
    expect(audit.result).toEqual({ refund_id: 'R-0' });
  });

  it('a pass reason is kept on the decision', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const stages: PipelineStep[] = [
      RESOLVE,
      { name: 'idempotency', run: () => Promise.resolve({ kind: 'continue', reason: 'read-only' }) },
    ];
    const { audit } = await new GuardPipeline(h.deps, stages).run(
      call({ order_id: 'O-1', amount: 5 }),
      context(),
    );
    expect(audit.decisions.at(-1)).toMatchObject({
      stage: 'idempotency',
      decision: 'pass',
      reason: 'read-only',
    });
  });

  it('every decision is reported to the observer, and an observer that throws changes nothing', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const seen: string[] = [];
    const pipeline = new GuardPipeline(
      {
        ...h.deps,
        observer: {
          onStage: (tool, d) => {
            seen.push(`${tool}/${d.stage}/${d.decision}`);
            throw new Error('metrics backend down');
          },
        },
      },
      STAGES,
    );
    const { result } = await pipeline.run(call({ order_id: 'O-1', amount: 75 }), context());
    expect(result.outcome).toBe('POLICY_VIOLATION');
    expect(seen).toEqual([
      'issue_refund/resolve/pass',
      'issue_refund/validate-input/pass',
      'issue_refund/authorize/pass',
      'issue_refund/rate-limit/pass',
      'issue_refund/business-rules/refuse',
    ]);
  });

  it('a stage refusing with a suggested fix on UNAUTHORIZED does not leak it to the result', async () => {
    const refund = countingRefundTool();
    h = harness([refund.tool]);
    const leaky: Stage = {
      name: 'authorize',
      run: () =>
        Promise.resolve({
          kind: 'refuse',
          error: new ToolgateError('UNAUTHORIZED', 'Not authorized to perform this action.', {
            suggestedFix: 'set approved_by to "manager"',
          }),
        }),
    };
    const { result } = await new GuardPipeline(h.deps, [RESOLVE, leaky]).run(
      call({ order_id: 'O-1', amount: 5 }),
      context(),
    );
    expect(result.error?.suggestedFix).toBeUndefined();
  });

  it('the provided idempotency key is used and reported', async () => {
    const { pipeline } = setup();
    const c = call({ order_id: 'O-1', amount: 5 });
    const { idempotencyKey } = await import('../../../libs/core/idempotency-key.js');
    const ctx = context();
    const key = idempotencyKey(ctx, c.name, c.arguments);
    const { result, audit } = await pipeline.run(c, ctx, { idempotencyKey: key });
    expect(result.outcome).toBe('SUCCESS');
    expect(result.idempotencyKey).toBe(key);
    expect(audit.idempotencyKey).toBe(key);
  });
});
