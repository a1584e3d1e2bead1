import { z } from 'zod';
import type { ExecutionContext, Principal } from '../core/types.js';
import { ToolDefinitionError } from './definition-error.js';
import { normalizeStrictNulls } from './strict-nulls.js';
import type {
  CostEstimate,
  LongRunning,
  RateLimitSpec,
  RetryPolicy,
  RetrySafety,
  ToolDefinition,
  ToolInvocation,
} from './tool-definition.js';
import { assertValidDefinition } from './validate-definition.js';
import { inputObjectOf } from './zod-introspect.js';

/** Per-call timeout when a tool does not set one (a per-call timeout, not a per-task one). */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** No retry unless the tool opts in; the delays only matter once it does (0.5 s, doubling, at most 8 s). */
export const DEFAULT_RETRY: RetryPolicy = Object.freeze({
  maxAttempts: 1,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
});

/**
 * What a tool author writes. Required: identity, description, schemas, scopes, owner and `execute`.
 * Everything else has a default chosen to fail safe (see {@link defineTool}).
 */
export interface ToolDefinitionInput<I, O> {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  /** Must be a `z.object(...)`; `I` is inferred from it. */
  readonly input: z.ZodType<I>;
  readonly output: z.ZodType<O>;
  /** Scopes the principal must all hold to see and call the tool. `[]` = any principal of its tenants. */
  readonly scopes: readonly string[];
  readonly owner: string;
  /**
   * Runs the tool once. Required, except for a status-check tool: it declares `retrySafety.apply`
   * instead (and must not declare `execute`), so the executor can fence the effect.
   */
  readonly execute?: (args: I, inv: ToolInvocation) => Promise<O>;
  readonly authorize?: (principal: Principal, args: I, ctx: ExecutionContext) => boolean | Promise<boolean>;
  readonly rateLimit?: RateLimitSpec;
  readonly cost?: CostEstimate;
  /** Default false. */
  readonly destructive?: boolean;
  /** Default true: a tool is assumed to have side effects until its author says otherwise. */
  readonly stateChanging?: boolean;
  readonly deprecated?: { readonly reason: string; readonly useInstead?: string };
  readonly conflictKey?: (args: I, ctx: ExecutionContext) => string;
  /** Default {@link DEFAULT_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  /** Missing fields come from {@link DEFAULT_RETRY}. */
  readonly retry?: Partial<RetryPolicy>;
  /** Default: `read-only` for tools with stateChanging=false, `none` otherwise. */
  readonly retrySafety?: RetrySafety<I, O>;
  readonly downstream?: string;
  /** Default `[]`: every argument is redacted in the audit record. */
  readonly auditFields?: readonly string[];
  /**
   * Arguments a person must see in full before agreeing to a call, shown first (see
   * {@link ToolDefinition.decisiveFields}); each must be an input key on `auditFields`. Default none.
   */
  readonly decisiveFields?: readonly string[];
  readonly maxResultBytes?: number;
  /** Default absent: callers wait for the result. */
  readonly longRunning?: LongRunning;
}

/** A frozen copy of a list of names; anything else is left for validation to refuse. */
function frozenNames(names: readonly string[]): readonly string[] {
  const value: unknown = names;
  return Array.isArray(value) ? Object.freeze([...names]) : names;
}

function freezeRetrySafety<I, O>(safety: RetrySafety<I, O>): RetrySafety<I, O> {
  return Object.freeze({ ...safety });
}

/**
 * The function the pipeline runs: `execute`, or a status-check tool's `apply`. A status-check tool
 * that declares `execute` is refused: code there could wait, then apply the effect after the
 * executor lost the call, and nothing would stop it.
 */
function executeOf<I, O>(
  name: string,
  def: ToolDefinitionInput<I, O>,
  safety: RetrySafety<I, O>,
): (args: I, inv: ToolInvocation) => Promise<O> {
  if (safety.kind === 'status-check') {
    const problems: string[] = [];
    if (def.execute !== undefined) {
      problems.push(
        'a status-check tool declares retrySafety.apply (the one request that makes the effect) instead of execute: the executor checks its lease right before apply, and it cannot fence code inside an execute.',
      );
    }
    if (typeof safety.apply !== 'function') {
      problems.push(
        "retrySafety 'status-check' needs an apply function (the one request that makes the effect).",
      );
    }
    if (problems.length > 0) throw new ToolDefinitionError(name, problems);
    return safety.apply;
  }
  if (def.execute === undefined) throw new ToolDefinitionError(name, ['execute is required.']);
  return def.execute;
}

/**
 * Builds a complete, validated, frozen {@link ToolDefinition} from what an author writes.
 *
 * Defaults: `destructive: false`, `stateChanging: true`, `timeoutMs: 10000`, `retry` =
 * `{ maxAttempts: 1, baseDelayMs: 500, maxDelayMs: 8000 }`, `auditFields: []`, and `retrySafety`
 * `{ kind: 'read-only' }` for tools with stateChanging=false or `{ kind: 'none' }` otherwise, so a
 * state-changing call whose outcome is unknown goes to reconciliation unless the author declares
 * how a retry is made safe.
 *
 * Validation (throws {@link ToolDefinitionError} listing every problem): see
 * {@link definitionProblems}; in particular a state-changing tool with `retry.maxAttempts > 1` must
 * declare retrySafety `forwards-key` or `status-check`.
 *
 * The returned `input` schema wraps the author's object schema so that `null` for an optional,
 * non-nullable field is treated as absent ({@link normalizeStrictNulls}): OpenAI strict mode makes
 * such fields nullable, and a strict-mode model sends `null` where it means "not given". The JSON
 * Schema shown to models is unchanged by the wrapper. The definition object and its arrays are
 * frozen; zod schemas are left as they are (zod caches internally).
 */
export function defineTool<I, O>(def: ToolDefinitionInput<I, O>): ToolDefinition<I, O> {
  const object = inputObjectOf(def.input);
  if (object === undefined) {
    throw new ToolDefinitionError(String(def.name), [
      'input must be a z.object(...) schema: both providers require an object at the root.',
    ]);
  }
  const stateChanging = def.stateChanging ?? true;
  const retrySafety: RetrySafety<I, O> =
    def.retrySafety ?? (stateChanging ? { kind: 'none' } : { kind: 'read-only' });
  const execute = executeOf(String(def.name), def, retrySafety);
  const input = z.preprocess((args) => normalizeStrictNulls(object, args), def.input);
  const full: ToolDefinition<I, O> = {
    ...def,
    execute,
    input,
    scopes: Object.freeze([...def.scopes]),
    destructive: def.destructive ?? false,
    stateChanging,
    timeoutMs: def.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    retry: Object.freeze({ ...DEFAULT_RETRY, ...def.retry }),
    retrySafety: freezeRetrySafety(retrySafety),
    auditFields: Object.freeze([...(def.auditFields ?? [])]),
    ...(def.decisiveFields !== undefined && { decisiveFields: frozenNames(def.decisiveFields) }),
    ...(def.deprecated !== undefined && { deprecated: Object.freeze({ ...def.deprecated }) }),
    ...(def.rateLimit !== undefined && {
      rateLimit: Object.freeze({ ...def.rateLimit, per: Object.freeze([...def.rateLimit.per]) }),
    }),
    ...(def.cost !== undefined && { cost: Object.freeze({ ...def.cost }) }),
  };
  assertValidDefinition(full);
  return Object.freeze(full);
}
