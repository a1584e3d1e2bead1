import { afterEach, describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../../libs/adapters/memory/index.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { rateLimitBuckets, rateLimitStage } from '../../../libs/guards/rate-limit.js';
import type { CallState } from '../../../libs/pipeline/call-state.js';
import type { BucketLimit, RateLimiter, TakeResult } from '../../../libs/ports/rate-limiter.js';
import type { RateLimitSpec } from '../../../libs/registry/tool-definition.js';
import { call, context, countingRefundTool, harness, principal } from '../pipeline/fixtures.js';
import type { Harness } from '../pipeline/fixtures.js';

let h: Harness | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

/** Records every take and answers from a real memory limiter (or throws, when told to). */
class RecordingLimiter implements RateLimiter {
  readonly takes: string[] = [];
  failWith: Error | undefined;
  constructor(private readonly inner: RateLimiter) {}
  take(key: string, limit: BucketLimit, cost?: number): Promise<TakeResult> {
    this.takes.push(key);
    if (this.failWith !== undefined) return Promise.reject(this.failWith);
    return this.inner.take(key, limit, cost);
  }
}

function setup(spec: RateLimitSpec | undefined) {
  const clock = new ManualClock(1_000_000);
  const limiter = new RecordingLimiter(new MemoryRateLimiter(clock));
  const { tool } = countingRefundTool(spec === undefined ? {} : { rateLimit: spec });
  h = harness([tool], { rateLimiter: limiter, clock });
  const state = (ctx = context()): CallState => ({
    call: call({ order_id: 'O-1', amount: 5 }),
    ctx,
    signal: new AbortController().signal,
    tool: tool as unknown as CallState['tool'],
    args: { order_id: 'O-1', amount: 5 },
    toolInvocations: 0,
    attempts: [],
  });
  return { limiter, clock, state, deps: h.deps, tool };
}

describe('rateLimitBuckets', () => {
  it('builds rl:<tenant>:<tool>:<dimension>:<id> keys, narrowest first, whatever order per lists', () => {
    const { tool } = countingRefundTool({
      rateLimit: { capacity: 5, refillPerSecond: 1, per: ['tool', 'tenant', 'principal', 'tenant'] },
    });
    expect(rateLimitBuckets(tool as never, context())).toEqual([
      { dimension: 'principal', key: 'rl:t1:issue_refund:principal:agent-7' },
      { dimension: 'tenant', key: 'rl:t1:issue_refund:tenant:t1' },
      { dimension: 'tool', key: 'rl:*:issue_refund:tool:issue_refund' },
    ]);
  });

  it('encodes ids so a ":" in a principal or tenant id cannot collide with another key', () => {
    const { tool } = countingRefundTool({
      rateLimit: { capacity: 5, refillPerSecond: 1, per: ['principal'] },
    });
    const ctx = context({ tenant: 'a:b', principal: principal({ id: 'x:principal:y', tenant: 'a:b' }) });
    expect(rateLimitBuckets(tool as never, ctx)).toEqual([
      { dimension: 'principal', key: 'rl:a%3Ab:issue_refund:principal:x%3Aprincipal%3Ay' },
    ]);
  });

  it('is empty for a tool without a rate limit', () => {
    expect(rateLimitBuckets(countingRefundTool().tool as never, context())).toEqual([]);
  });
});

describe('rate-limit stage', () => {
  it('continues without touching the limiter when the tool declares no limit', async () => {
    const { limiter, state, deps } = setup(undefined);
    expect(await rateLimitStage(state(), deps)).toEqual({ kind: 'continue' });
    expect(limiter.takes).toEqual([]);
  });

  it('allows capacity calls, then refuses RATE_LIMITED with a positive retryAfterMs', async () => {
    const { state, deps } = setup({ capacity: 2, refillPerSecond: 0.5, per: ['principal'] });
    const kinds = [];
    for (let i = 0; i < 3; i++) kinds.push(await rateLimitStage(state(), deps));
    expect(kinds.slice(0, 2)).toEqual([{ kind: 'continue' }, { kind: 'continue' }]);
    const refused = kinds[2]!;
    expect(refused.kind).toBe('refuse');
    if (refused.kind !== 'refuse') return;
    expect(refused.error.code).toBe('RATE_LIMITED');
    expect(refused.error.retryable).toBe(true);
    expect(refused.error.retryAfterMs).toBe(2000);
    expect(refused.error.message).toContain('Retry in 2 s');
  });

  it('refills over time on the injected clock', async () => {
    const { state, deps, clock } = setup({ capacity: 1, refillPerSecond: 1, per: ['principal'] });
    expect((await rateLimitStage(state(), deps)).kind).toBe('continue');
    expect((await rateLimitStage(state(), deps)).kind).toBe('refuse');
    await clock.advance(1000);
    expect((await rateLimitStage(state(), deps)).kind).toBe('continue');
  });

  it('budgets are per principal: one principal exhausted does not limit another', async () => {
    const { state, deps } = setup({ capacity: 1, refillPerSecond: 0.01, per: ['principal'] });
    expect((await rateLimitStage(state(), deps)).kind).toBe('continue');
    expect((await rateLimitStage(state(), deps)).kind).toBe('refuse');
    const other = context({ principal: principal({ id: 'agent-8' }) });
    expect((await rateLimitStage(state(other), deps)).kind).toBe('continue');
  });

  it('stops at the first refusing bucket, so a runaway principal does not drain the tenant budget', async () => {
    const { limiter, state, deps } = setup({
      capacity: 1,
      refillPerSecond: 0.01,
      per: ['principal', 'tenant'],
    });
    await rateLimitStage(state(), deps);
    limiter.takes.length = 0;
    for (let i = 0; i < 5; i++) expect((await rateLimitStage(state(), deps)).kind).toBe('refuse');
    expect(limiter.takes).toEqual(Array(5).fill('rl:t1:issue_refund:principal:agent-7'));
  });

  it('a wider bucket refusing has already charged the narrower one (documented trade-off)', async () => {
    const { limiter, state, deps } = setup({
      capacity: 2,
      refillPerSecond: 0.01,
      per: ['principal', 'tenant'],
    });
    const a = context();
    const b = context({ principal: principal({ id: 'agent-8' }) });
    expect((await rateLimitStage(state(a), deps)).kind).toBe('continue');
    expect((await rateLimitStage(state(a), deps)).kind).toBe('continue');
    // The tenant bucket (capacity 2) is empty now; b is refused by it, after spending from its own.
    limiter.takes.length = 0;
    const refused = await rateLimitStage(state(b), deps);
    expect(refused.kind === 'refuse' && refused.error.message).toContain("organization's");
    expect(limiter.takes).toEqual(['rl:t1:issue_refund:principal:agent-8', 'rl:t1:issue_refund:tenant:t1']);
  });

  it('fails closed with DEPENDENCY_UNAVAILABLE (retryable) when the limiter store is unreachable', async () => {
    const { limiter, state, deps } = setup({ capacity: 5, refillPerSecond: 1, per: ['tenant'] });
    limiter.failWith = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), {
      code: 'ECONNREFUSED',
    });
    const r = await rateLimitStage(state(), deps);
    expect(r.kind).toBe('refuse');
    if (r.kind !== 'refuse') return;
    expect(r.error.code).toBe('DEPENDENCY_UNAVAILABLE');
    expect(r.error.retryable).toBe(true);
    expect(r.error.message).not.toContain('6379');
  });
});

describe('rate-limit stage: what a refusal tells the model', () => {
  /** A limiter that refuses every take with `retryAfterMs`. */
  function refusing(retryAfterMs: number): RateLimiter {
    return { take: () => Promise.resolve({ allowed: false, remaining: 0, retryAfterMs }) };
  }

  function refusalWith(limiter: RateLimiter, per: RateLimitSpec['per']) {
    const { tool } = countingRefundTool({ rateLimit: { capacity: 1, refillPerSecond: 1, per } });
    h = harness([tool], { rateLimiter: limiter });
    const state: CallState = {
      call: call({ order_id: 'O-1', amount: 5 }),
      ctx: context(),
      signal: new AbortController().signal,
      tool: tool as unknown as CallState['tool'],
      args: { order_id: 'O-1', amount: 5 },
      toolInvocations: 0,
      attempts: [],
    };
    return rateLimitStage(state, h.deps);
  }

  it.each([
    ['principal', 'your'],
    ['tenant', "your organization's"],
    ['tool', "this tool's overall"],
  ] as const)('names whose budget ran out: %s', async (dimension, whose) => {
    const r = await refusalWith(refusing(1_500), [dimension]);
    expect(r).toMatchObject({
      kind: 'refuse',
      error: {
        code: 'RATE_LIMITED',
        message: `Rate limit reached: ${whose} budget for issue_refund is used up. Retry in 2 s.`,
        retryable: true,
        retryAfterMs: 1_500,
        suggestedFix:
          'Wait at least 2 s before calling issue_refund again, or tell the user the action is being throttled.',
      },
    });
  });

  it.each([
    [0.2, 1, 1],
    [0, 1, 1],
    [999, 999, 1],
    [1_000, 1_000, 1],
    [1_001, 1_001, 2],
    [Number.POSITIVE_INFINITY, 1_000, 1],
    [Number.NaN, 1_000, 1],
  ])('a limiter wait of %s ms is passed on as %s ms, "%s s"', async (wait, ms, seconds) => {
    const r = await refusalWith(refusing(wait), ['principal']);
    expect(r.kind === 'refuse' && [r.error.retryAfterMs, r.error.message]).toEqual([
      ms,
      `Rate limit reached: your budget for issue_refund is used up. Retry in ${seconds} s.`,
    ]);
  });

  it('a RangeError from the limiter (an invalid bucket) is a bug, rethrown rather than called an outage', async () => {
    const limiter: RateLimiter = { take: () => Promise.reject(new RangeError('capacity must be > 0')) };
    await expect(refusalWith(limiter, ['principal'])).rejects.toThrow(RangeError);
  });

  it('an unreachable limiter store: the generic message, with the cause kept for logs', async () => {
    const down = new Error('connect ECONNREFUSED 127.0.0.1:6379');
    const r = await refusalWith({ take: () => Promise.reject(down) }, ['principal']);
    expect(r).toMatchObject({
      kind: 'refuse',
      error: { code: 'DEPENDENCY_UNAVAILABLE', message: 'The rate limit could not be checked right now.' },
    });
    expect(r.kind === 'refuse' && r.error.cause).toBe(down);
  });

  it('spends exactly one token per bucket, with the tool’s limit', async () => {
    const takes: unknown[][] = [];
    const limiter: RateLimiter = {
      take: (...a) => {
        takes.push(a);
        return Promise.resolve({ allowed: true, remaining: 0, retryAfterMs: 0 });
      },
    };
    expect(await refusalWith(limiter, ['tool'])).toEqual({ kind: 'continue' });
    expect(takes).toEqual([['rl:*:issue_refund:tool:issue_refund', { capacity: 1, refillPerSecond: 1 }, 1]]);
  });
});

describe('rate-limit stage: wiring', () => {
  it('run before the tool is resolved, it fails as a wiring error naming the stage', async () => {
    const { state, deps } = setup({ capacity: 1, refillPerSecond: 1, per: ['principal'] });
    await expect(rateLimitStage({ ...state(), tool: undefined }, deps)).rejects.toMatchObject({
      code: 'INTERNAL',
      cause: { message: 'stage rate-limit ran before call state had tool: check the stage order' },
    });
  });
});
