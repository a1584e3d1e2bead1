import { z } from 'zod';
import { MemoryIdempotencyStore, MemoryRateLimiter } from '../../../libs/adapters/memory/index.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { ExecutionContext, NormalizedToolCall } from '../../../libs/core/types.js';
import { createCircuitBreakers } from '../../../libs/execution/breakers.js';
import { createOutboundLimiter } from '../../../libs/execution/outbound-limiter.js';
import { createExecuteStage } from '../../../libs/guards/execute.js';
import { idempotencyLayer } from '../../../libs/guards/idempotency.js';
import { validateOutputStage } from '../../../libs/guards/validate-output.js';
import type { CallState } from '../../../libs/pipeline/call-state.js';
import type { PipelineDeps } from '../../../libs/pipeline/deps.js';
import type { GuardStage, StageResult, Verdict } from '../../../libs/pipeline/stage.js';
import type { Clock } from '../../../libs/core/clock.js';
import type { IdempotencyStore } from '../../../libs/ports/idempotency-store.js';
import type { BucketLimit } from '../../../libs/ports/rate-limiter.js';
import type {
  RetrySafety,
  StatusCheck,
  ToolDefinition,
  ToolInvocation,
} from '../../../libs/registry/tool-definition.js';

/** Test scaffolding for stages 5–7, run directly (without stages 0–4) against in-memory adapters. */

export const orderOutput = z.object({ orderId: z.string(), status: z.string() });
export type OrderOutput = z.infer<typeof orderOutput>;

/** A status check as a test writes it: its `apply` is the tool's `execute` (see {@link makeTool}). */
export interface TestStatusCheck {
  readonly kind: 'status-check';
  readonly check: StatusCheck<Record<string, unknown>>;
  readonly settleMs?: number;
}

type ToolOverrides = Omit<Partial<ToolDefinition<Record<string, unknown>, unknown>>, 'retrySafety'> & {
  readonly retrySafety?: RetrySafety<Record<string, unknown>> | TestStatusCheck;
};

/**
 * A state-changing tool; override anything. `execute` defaults to a fixed confirmation. A status
 * check given without `apply` gets `execute` as its apply, as `defineTool` wires it.
 */
export function makeTool(overrides: ToolOverrides = {}): ToolDefinition {
  const tool = makeToolUnchecked(overrides);
  const safety: RetrySafety<Record<string, unknown>> = tool.retrySafety;
  if (safety.kind !== 'status-check' || 'apply' in safety) return tool as ToolDefinition;
  const wired: RetrySafety<Record<string, unknown>> = { ...(safety as TestStatusCheck), apply: tool.execute };
  return { ...tool, retrySafety: wired } as ToolDefinition;
}

function makeToolUnchecked(overrides: ToolOverrides): ToolDefinition<Record<string, unknown>, unknown> {
  return {
    name: 'issue_refund',
    version: '1.0.0',
    description: 'Refund an order.',
    input: z.object({ orderId: z.string(), amount: z.number() }),
    output: orderOutput,
    scopes: [],
    destructive: false,
    stateChanging: true,
    owner: 'payments-team',
    timeoutMs: 200,
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 4 },
    retrySafety: { kind: 'none' },
    auditFields: ['orderId'],
    execute: (args) => Promise.resolve({ orderId: String(args.orderId), status: 'refunded' }),
    ...overrides,
  } as ToolDefinition<Record<string, unknown>, unknown>;
}

export function makeCtx(overrides: Partial<ExecutionContext> = {}): ExecutionContext {
  return {
    principal: { id: 'u-1', tenant: 't1', kind: 'agent', scopes: [], roles: [] },
    tenant: 't1',
    taskId: 'task-1',
    step: 0,
    index: 0,
    traceId: '0af7651916cd43dd8448eb211c80319c',
    ...overrides,
  };
}

export interface StateOptions {
  readonly args?: Record<string, unknown>;
  readonly ctx?: Partial<ExecutionContext>;
  readonly providedKey?: string;
  readonly signal?: AbortSignal;
}

/** The state stages 0–4 would have left: tool resolved, arguments validated. */
export function makeState(tool: ToolDefinition, opts: StateOptions = {}): CallState {
  const args = opts.args ?? { orderId: 'O-5512', amount: 49.99 };
  const call: NormalizedToolCall = { id: 'call-1', name: tool.name, arguments: args };
  return {
    call,
    ctx: makeCtx(opts.ctx),
    ...(opts.providedKey === undefined ? {} : { providedKey: opts.providedKey }),
    signal: opts.signal ?? new AbortController().signal,
    tool,
    args,
    toolInvocations: 0,
    attempts: [],
  };
}

export interface DepsOptions {
  readonly clock?: Clock;
  readonly store?: IdempotencyStore;
  readonly outboundLimits?: Record<string, BucketLimit>;
  readonly owner?: string;
  readonly resetTimeoutMs?: number;
}

export type TestDeps = PipelineDeps & { readonly store: IdempotencyStore };

export function makeDeps(opts: DepsOptions = {}): TestDeps {
  const clock = opts.clock ?? systemClock;
  const store = opts.store ?? new MemoryIdempotencyStore(clock);
  const rateLimiter = new MemoryRateLimiter(clock);
  return {
    tools: {
      resolve: () => ({ ok: false, error: new ToolgateError('UNKNOWN_TOOL', 'not used by these tests') }),
    },
    idempotency: store,
    store,
    rateLimiter,
    policy: { version: 'test', factsOf: () => [], evaluate: () => ({ allowed: true }) },
    breakers: createCircuitBreakers(
      {
        errorThresholdPercentage: 50,
        volumeThreshold: 5,
        resetTimeoutMs: opts.resetTimeoutMs ?? 60_000,
        timeoutMs: false,
      },
      clock,
    ),
    outbound: createOutboundLimiter(rateLimiter, opts.outboundLimits ?? {}, clock),
    clock,
    owner: opts.owner ?? 'executor-a',
    settings: { resultTtlMs: 60_000, leaseMarginMs: 1_000 },
  };
}

export interface Ran {
  /** The stage result that ended the run, or `continue` when all three passed. */
  readonly end: StageResult;
  /** The stage that ended it, or 'all' when every stage continued. */
  readonly endedAt: 'idempotency' | 'execute' | 'validate-output' | 'all';
  /** The reasons the inner stages gave when they continued (recorded on their pass decisions). */
  readonly passReasons: Partial<Record<'execute' | 'validate-output', string>>;
  readonly state: CallState;
}

/**
 * Runs the idempotency layer around execute → validate-output, with the real layer (its claim and
 * its settlement) and the inner stages in order, stopping at the first that does not continue.
 */
export async function runTail(
  state: CallState,
  deps: PipelineDeps,
  execute: GuardStage = createExecuteStage({ random: () => 0.5 }),
): Promise<Ran> {
  let endedAt: Ran['endedAt'] = 'idempotency';
  const passReasons: Ran['passReasons'] = {};
  const inner = async (): Promise<Verdict> => {
    const stages = [
      ['execute', execute],
      ['validate-output', validateOutputStage],
    ] as const;
    for (const [name, stage] of stages) {
      const end = await stage(state, deps);
      if (end.kind !== 'continue') {
        endedAt = name;
        return end;
      }
      if (end.reason !== undefined) passReasons[name] = end.reason;
    }
    endedAt = 'all';
    return { kind: 'done' };
  };
  const verdict = await idempotencyLayer.wrap(state, deps, inner);
  return { end: verdict.kind === 'done' ? { kind: 'continue' } : verdict, endedAt, passReasons, state };
}

/** A tool body that never answers until its signal aborts (a hung downstream). */
export function hang(inv: ToolInvocation): Promise<never> {
  return new Promise((_, reject) => {
    inv.signal.addEventListener('abort', () => reject(inv.signal.reason as Error), { once: true });
  });
}

/** An error as an HTTP client would throw it for a downstream 5xx. */
export function http(status: number): Error & { status: number } {
  return Object.assign(new Error(`HTTP ${status}`), { status });
}

/**
 * `inner` with some methods replaced: every other method (whatever the port grows) is delegated, so
 * test doubles do not have to be rewritten each time the port gains a method.
 */
export function wrapStore(inner: IdempotencyStore, overrides: Partial<IdempotencyStore>): IdempotencyStore {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop as keyof IdempotencyStore];
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
