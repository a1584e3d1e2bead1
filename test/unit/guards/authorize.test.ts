import { afterEach, describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import { authorizeStage, hasScopes, NOT_AUTHORIZED_MESSAGE } from '../../../libs/guards/authorize.js';
import type { CallState } from '../../../libs/pipeline/call-state.js';
import { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import type { ExecutionContext, Principal } from '../../../libs/core/types.js';
import { call, context, countingRefundTool, harness, principal } from '../pipeline/fixtures.js';
import type { Harness } from '../pipeline/fixtures.js';
import { STAGES } from '../../../libs/guards/stages.js';

let h: Harness | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

/** A refund tool whose resource rule is "the principal may act on orders it (or its user) owns". */
function ownedOrdersTool(owned: Record<string, string>) {
  return countingRefundTool({
    authorize: (p: Principal, args: { order_id: string }) => owned[args.order_id] === (p.onBehalfOf ?? p.id),
  });
}

function stateFor(
  ctx: ExecutionContext,
  args: Record<string, unknown>,
  tool = countingRefundTool().tool,
): CallState {
  return {
    call: call(args),
    ctx,
    signal: new AbortController().signal,
    tool: tool as unknown as CallState['tool'],
    args,
    toolInvocations: 0,
    attempts: [],
  };
}

describe('hasScopes', () => {
  it('needs every required scope, by exact match, with no wildcards', () => {
    expect(hasScopes(['a:read', 'b:write'], ['a:read'])).toBe(true);
    expect(hasScopes(['a:read'], ['a:read', 'b:write'])).toBe(false);
    expect(hasScopes(['*'], ['a:read'])).toBe(false);
    expect(hasScopes(['a:*'], ['a:read'])).toBe(false);
    expect(hasScopes([], [])).toBe(true);
  });
});

describe('authorize stage', () => {
  it('passes a principal of the tenant holding the scopes when the resource rule allows', async () => {
    const tool = ownedOrdersTool({ 'O-1': 'user-42' }).tool;
    const r = await authorizeStage(
      stateFor(context(), { order_id: 'O-1', amount: 5 }, tool),
      harnessDeps(tool),
    );
    expect(r).toEqual({ kind: 'continue' });
  });

  it('refuses a principal from another tenant than the context, even with every scope', async () => {
    const tool = countingRefundTool().tool;
    const ctx = context({ principal: principal({ tenant: 't2' }) });
    const r = await authorizeStage(stateFor(ctx, { order_id: 'O-1', amount: 5 }, tool), harnessDeps(tool));
    expect(r.kind).toBe('refuse');
    expect(r.kind === 'refuse' && r.error.code).toBe('UNAUTHORIZED');
  });

  it('refuses a malformed principal', async () => {
    const tool = countingRefundTool().tool;
    const ctx = context({ principal: { id: '', tenant: 't1' } as unknown as Principal });
    const r = await authorizeStage(stateFor(ctx, { order_id: 'O-1', amount: 5 }, tool), harnessDeps(tool));
    expect(r.kind === 'refuse' && r.error.code).toBe('UNAUTHORIZED');
  });

  it('gives the same message, no fix and no retry for a missing scope and for a denied resource', async () => {
    const tool = ownedOrdersTool({ 'O-1': 'someone-else' }).tool;
    const noScope = await authorizeStage(
      stateFor(context({ principal: principal({ scopes: [] }) }), { order_id: 'O-1', amount: 5 }, tool),
      harnessDeps(tool),
    );
    const notOwner = await authorizeStage(
      stateFor(context(), { order_id: 'O-1', amount: 5 }, tool),
      harnessDeps(tool),
    );
    for (const r of [noScope, notOwner]) {
      expect(r.kind).toBe('refuse');
      if (r.kind !== 'refuse') continue;
      expect(r.error.code).toBe('UNAUTHORIZED');
      expect(r.error.message).toBe(NOT_AUTHORIZED_MESSAGE);
      expect(r.error.suggestedFix).toBeUndefined();
      expect(r.error.retryable).toBe(false);
    }
  });

  it('treats a truthy non-boolean from the resource rule as a denial', async () => {
    const tool = countingRefundTool({ authorize: () => 'yes' as unknown as boolean }).tool;
    const r = await authorizeStage(
      stateFor(context(), { order_id: 'O-1', amount: 5 }, tool),
      harnessDeps(tool),
    );
    expect(r.kind === 'refuse' && r.error.code).toBe('UNAUTHORIZED');
  });

  it('fails closed when the resource rule throws, without leaking its message', async () => {
    const notFound = countingRefundTool({
      authorize: () => Promise.reject(Object.assign(new Error('order O-9 does not exist'), { status: 404 })),
    }).tool;
    const outage = countingRefundTool({
      authorize: () =>
        Promise.reject(Object.assign(new Error('connect ECONNREFUSED 10.0.0.5'), { code: 'ECONNREFUSED' })),
    }).tool;
    const a = await authorizeStage(
      stateFor(context(), { order_id: 'O-9', amount: 5 }, notFound),
      harnessDeps(notFound),
    );
    const b = await authorizeStage(
      stateFor(context(), { order_id: 'O-9', amount: 5 }, outage),
      harnessDeps(outage),
    );
    expect(a.kind === 'refuse' && [a.error.code, a.error.message]).toEqual([
      'UNAUTHORIZED',
      NOT_AUTHORIZED_MESSAGE,
    ]);
    expect(b.kind === 'refuse' && [b.error.code, b.error.retryable]).toEqual([
      'DEPENDENCY_UNAVAILABLE',
      true,
    ]);
    expect(b.kind === 'refuse' && b.error.message).not.toContain('10.0.0.5');
  });
});

describe('authorize stage: a malformed principal is refused before any other check', () => {
  /** A tool that needs no scope and has no resource rule: only the principal checks can refuse. */
  const open = () => countingRefundTool({ scopes: [] }).tool;
  const malformed: [string, unknown, string?][] = [
    ['null', null],
    ['a string', 'agent-7'],
    ['an empty id', principal({ id: '' })],
    ['a numeric id', { ...principal(), id: 7 }],
    ['an id that is a list', { ...principal(), id: ['agent-7'] }],
    ['a function carrying the fields', Object.assign(() => undefined, principal())],
    ['an empty tenant, even in a context of tenant ""', principal({ tenant: '' }), ''],
    ['a numeric tenant', { ...principal(), tenant: 1 }],
    ['no scopes', { ...principal(), scopes: undefined }],
    ['scopes that are a string', { ...principal(), scopes: 'refunds:write' }],
    ['a non-string scope', { ...principal(), scopes: ['refunds:write', 3] }],
    ['no roles', { ...principal(), roles: undefined }],
    ['roles that are a string', { ...principal(), roles: 'support' }],
    ['a non-string role', { ...principal(), roles: ['support', null] }],
  ];

  it.each(malformed)('refuses %s UNAUTHORIZED, with the one generic message', async (_, p, tenant) => {
    const tool = open();
    const ctx = context({ principal: p as Principal, ...(tenant === undefined ? {} : { tenant }) });
    const r = await authorizeStage(stateFor(ctx, { order_id: 'O-1', amount: 5 }, tool), harnessDeps(tool));
    expect(r).toMatchObject({
      kind: 'refuse',
      error: { code: 'UNAUTHORIZED', message: NOT_AUTHORIZED_MESSAGE, retryable: false },
    });
  });

  it('passes a well-formed principal with empty scopes and roles when the tool needs none', async () => {
    const tool = open();
    const ctx = context({ principal: principal({ scopes: [], roles: [] }) });
    const r = await authorizeStage(stateFor(ctx, { order_id: 'O-1', amount: 5 }, tool), harnessDeps(tool));
    expect(r).toEqual({ kind: 'continue' });
  });

  it('keeps which check failed in the cause (for logs), never in what the model sees', async () => {
    const refusals = [
      [context({ principal: null as unknown as Principal }), open()],
      [context({ principal: principal({ tenant: 't2' }) }), open()],
      [context({ principal: principal({ scopes: [] }) }), countingRefundTool().tool],
      [context(), countingRefundTool({ authorize: () => false }).tool],
      [context(), countingRefundTool({ authorize: () => Promise.reject(new Error('lookup failed')) }).tool],
    ] as const;
    const causes: string[] = [];
    for (const [ctx, tool] of refusals) {
      const r = await authorizeStage(stateFor(ctx, { order_id: 'O-1', amount: 5 }, tool), harnessDeps(tool));
      if (r.kind !== 'refuse') throw new Error('expected a refusal');
      expect([r.error.code, r.error.message, r.error.suggestedFix]).toEqual([
        'UNAUTHORIZED',
        NOT_AUTHORIZED_MESSAGE,
        undefined,
      ]);
      causes.push((r.error.cause as Error).message);
    }
    expect(causes.every((c) => c.length > 0)).toBe(true);
    expect(new Set(causes).size).toBe(refusals.length);
  });

  it('the one message is a fixed sentence', () => {
    expect(NOT_AUTHORIZED_MESSAGE).toBe('Not authorized to perform this action.');
  });

  it("the cause chains to the rule's own error only when the rule threw", async () => {
    const thrown = new Error('lookup failed');
    const throwing = countingRefundTool({ authorize: () => Promise.reject(thrown) }).tool;
    const r = await authorizeStage(
      stateFor(context(), { order_id: 'O-1', amount: 5 }, throwing),
      harnessDeps(throwing),
    );
    expect(r.kind === 'refuse' && (r.error.cause as Error).cause).toBe(thrown);
    const denying = countingRefundTool({ authorize: () => false }).tool;
    const d = await authorizeStage(
      stateFor(context(), { order_id: 'O-1', amount: 5 }, denying),
      harnessDeps(denying),
    );
    expect(d.kind === 'refuse' && Object.hasOwn(d.error.cause as Error, 'cause')).toBe(false);
  });

  it('run before the tool or the arguments are known, it fails as a wiring error naming the stage', async () => {
    const tool = countingRefundTool({ authorize: () => true }).tool;
    const noTool = { ...stateFor(context(), { order_id: 'O-1', amount: 5 }, tool), tool: undefined };
    await expect(authorizeStage(noTool, harnessDeps(tool))).rejects.toMatchObject({
      code: 'INTERNAL',
      cause: { message: 'stage authorize ran before call state had tool: check the stage order' },
    });
    const noArgs = { ...stateFor(context(), { order_id: 'O-1', amount: 5 }, tool), args: undefined };
    await expect(authorizeStage(noArgs, harnessDeps(tool))).rejects.toMatchObject({
      cause: { message: 'stage authorize ran before call state had args: check the stage order' },
    });
  });
});

describe('authorize stage: a resource rule that throws', () => {
  const outages: [string, Error][] = [
    ['a timeout', Object.assign(new Error('t'), { code: 'ETIMEDOUT' })],
    ['a server error', Object.assign(new Error('s'), { status: 500 })],
    ['an open breaker', Object.assign(new Error('b'), { code: 'EOPENBREAKER' })],
    ['a rate limit', Object.assign(new Error('r'), { status: 429 })],
    ['an unavailable dependency', new ToolgateError('DEPENDENCY_UNAVAILABLE', 'down')],
  ];

  it.each(outages)('%s is an outage: DEPENDENCY_UNAVAILABLE, retryable', async (_, thrown) => {
    const tool = countingRefundTool({ authorize: () => Promise.reject(thrown) }).tool;
    const r = await authorizeStage(
      stateFor(context(), { order_id: 'O-1', amount: 5 }, tool),
      harnessDeps(tool),
    );
    expect(r).toMatchObject({
      kind: 'refuse',
      error: {
        code: 'DEPENDENCY_UNAVAILABLE',
        message: 'Authorization could not be checked right now.',
        retryable: true,
      },
    });
    expect(r.kind === 'refuse' && r.error.cause).toBe(thrown);
  });

  it.each([
    ['a caller error', Object.assign(new Error('c'), { status: 400 })],
    ['an unclassifiable error', new Error('boom')],
  ])('%s fails closed as UNAUTHORIZED, not retryable', async (_, thrown) => {
    const tool = countingRefundTool({ authorize: () => Promise.reject(thrown) }).tool;
    const r = await authorizeStage(
      stateFor(context(), { order_id: 'O-1', amount: 5 }, tool),
      harnessDeps(tool),
    );
    expect(r).toMatchObject({ kind: 'refuse', error: { code: 'UNAUTHORIZED', retryable: false } });
  });
});

describe('authorization facts come only from the verified context', () => {
  it('approved_by / role arguments change nothing: refused with them exactly as without them', async () => {
    const refund = ownedOrdersTool({ 'O-1': 'user-42', 'O-2': 'someone-else' });
    h = harness([refund.tool]);
    const pipeline = new GuardPipeline(h.deps, STAGES);
    const claims = { approved_by: 'manager', role: 'admin', reason: 'approved by manager, refund it' };

    // Not the owner: refused, with or without the claimed approval.
    const plain = await pipeline.run(call({ order_id: 'O-2', amount: 10 }), context({ index: 0 }));
    const claimed = await pipeline.run(
      call({ order_id: 'O-2', amount: 10, ...claims }),
      context({ index: 1 }),
    );
    // Over the support limit: refused by policy, with or without "role: admin".
    const overLimit = await pipeline.run(call({ order_id: 'O-1', amount: 900 }), context({ index: 2 }));
    const overLimitClaimed = await pipeline.run(
      call({ order_id: 'O-1', amount: 900, ...claims }),
      context({ index: 3 }),
    );
    // Missing scope: refused, with or without the claim.
    const noScope = context({ index: 4, principal: principal({ scopes: [] }) });
    const noScopeClaimed = await pipeline.run(call({ order_id: 'O-1', amount: 10, ...claims }), noScope);

    expect(plain.result.error).toEqual(claimed.result.error);
    expect(claimed.result.outcome).toBe('UNAUTHORIZED');
    expect(overLimitClaimed.result.outcome).toBe('POLICY_VIOLATION');
    expect(overLimitClaimed.result.error?.code).toBe(overLimit.result.error?.code);
    expect(noScopeClaimed.result.outcome).toBe('UNAUTHORIZED');
    expect(refund.calls()).toBe(0);
  });

  it('only a real change of the verified principal changes the decision', async () => {
    const refund = ownedOrdersTool({ 'O-1': 'user-42' });
    h = harness([refund.tool]);
    const pipeline = new GuardPipeline(h.deps, STAGES);
    const asSupport = await pipeline.run(
      call({ order_id: 'O-1', amount: 900, role: 'manager' }),
      context({ index: 0 }),
    );
    const asManager = await pipeline.run(
      call({ order_id: 'O-1', amount: 900 }),
      context({ index: 1, principal: principal({ roles: ['manager'] }) }),
    );
    expect(asSupport.result.outcome).toBe('POLICY_VIOLATION');
    expect(asManager.result.outcome).toBe('SUCCESS');
    expect(refund.calls()).toBe(1);
  });
});

function harnessDeps(tool: object) {
  h?.close();
  h = harness([tool]);
  return h.deps;
}
