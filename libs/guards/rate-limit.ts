import { ToolgateError } from '../core/errors.js';
import type { ExecutionContext } from '../core/types.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import { requireTool } from '../pipeline/stage-preconditions.js';
import { CONTINUE } from '../pipeline/stage.js';
import type { GuardStage, StageResult } from '../pipeline/stage.js';
import type { RateLimitSpec, ToolDefinition } from '../registry/tool-definition.js';

type Dimension = RateLimitSpec['per'][number];

/** One budget a call spends from. */
export interface RateLimitBucket {
  readonly dimension: Dimension;
  /** `rl:<tenant>:<tool>:<dimension>:<id>`, each part URI-encoded so ids containing ":" cannot collide. */
  readonly key: string;
}

/** Narrowest first: see {@link rateLimitStage} for why the order matters. */
const ORDER: readonly Dimension[] = ['principal', 'tenant', 'tool'];

/**
 * The buckets a call to `tool` spends from, narrowest first, one per distinct dimension in
 * `tool.rateLimit.per`; none when the tool declares no rate limit.
 *
 * - principal: `rl:<tenant>:<tool>:principal:<principal id>`, one caller's budget for this tool;
 * - tenant: `rl:<tenant>:<tool>:tenant:<tenant>`, the whole tenant's budget for this tool;
 * - tool: `rl:*:<tool>:tool:<tool>`, the tool's budget across every tenant (protects what it calls).
 *
 * The `rl:` prefix keeps these apart from other users of the same limiter (the outbound limiter's
 * `ob:<downstream>` buckets).
 */
export function rateLimitBuckets(tool: ToolDefinition, ctx: ExecutionContext): RateLimitBucket[] {
  const spec = tool.rateLimit;
  if (spec === undefined) return [];
  const wanted = new Set(spec.per);
  const name = enc(tool.name);
  const tenant = enc(ctx.tenant);
  return ORDER.filter((d) => wanted.has(d)).map((dimension) => {
    switch (dimension) {
      case 'principal':
        return { dimension, key: `rl:${tenant}:${name}:principal:${enc(ctx.principal.id)}` };
      case 'tenant':
        return { dimension, key: `rl:${tenant}:${name}:tenant:${tenant}` };
      case 'tool':
        return { dimension, key: `rl:*:${name}:tool:${name}` };
    }
  });
}

const WHOSE: Readonly<Record<Dimension, string>> = {
  principal: 'your',
  tenant: "your organization's",
  tool: "this tool's overall",
};

/**
 * Stage 3: spends one token from each of the tool's buckets through `deps.rateLimiter`, which is
 * shared by every executor on the same store, so the budget holds across instances.
 *
 * Buckets are taken one at a time, narrowest first, and the stage stops at the first refusal, so
 * that refusal's `retryAfterMs` is the whole answer. The port has no multi-key take and no refund,
 * so the trade-offs are deliberate: a call refused by a wider bucket has already spent a token from
 * the narrower ones (the caller is charged for a refused call, which errs on the side of limiting);
 * in exchange a principal in a runaway loop is stopped by its own bucket and never drains the
 * tenant's or the tool's budget for everyone else. A bucket not yet reached may also refuse after
 * the wait; the model then waits again.
 *
 * Refusal: RATE_LIMITED, retryable, `retryAfterMs` > 0. A limiter that throws (store unreachable)
 * fails closed with DEPENDENCY_UNAVAILABLE, retryable; a RangeError (an invalid bucket spec, a bug
 * the registry should have caught) is rethrown for the pipeline to classify.
 */
export const rateLimitStage: GuardStage = async (state, deps) => {
  const tool = requireTool(state, 'rate-limit');
  const spec = tool.rateLimit;
  if (spec === undefined) return CONTINUE;
  const limit = { capacity: spec.capacity, refillPerSecond: spec.refillPerSecond };
  for (const bucket of rateLimitBuckets(tool, state.ctx)) {
    const taken = await take(deps, bucket.key, limit);
    if (taken instanceof ToolgateError) return { kind: 'refuse', error: taken };
    if (!taken.allowed) return limited(tool.name, bucket.dimension, taken.retryAfterMs);
  }
  return CONTINUE;
};

async function take(
  deps: PipelineDeps,
  key: string,
  limit: { capacity: number; refillPerSecond: number },
): Promise<{ allowed: boolean; retryAfterMs: number } | ToolgateError> {
  try {
    return await deps.rateLimiter.take(key, limit, 1);
  } catch (err) {
    if (err instanceof RangeError) throw err;
    return new ToolgateError('DEPENDENCY_UNAVAILABLE', 'The rate limit could not be checked right now.', {
      retryable: true,
      cause: err,
    });
  }
}

function limited(tool: string, dimension: Dimension, retryAfterMs: number): StageResult {
  const waitMs = Number.isFinite(retryAfterMs) ? Math.max(1, Math.ceil(retryAfterMs)) : 1000;
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return {
    kind: 'refuse',
    error: new ToolgateError(
      'RATE_LIMITED',
      `Rate limit reached: ${WHOSE[dimension]} budget for ${tool} is used up. Retry in ${seconds} s.`,
      {
        retryable: true,
        retryAfterMs: waitMs,
        suggestedFix: `Wait at least ${seconds} s before calling ${tool} again, or tell the user the action is being throttled.`,
      },
    ),
  };
}

function enc(part: string): string {
  return encodeURIComponent(part);
}
