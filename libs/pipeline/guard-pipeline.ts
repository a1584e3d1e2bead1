import { classify } from '../core/classify.js';
import { ToolgateError } from '../core/errors.js';
import type { Outcome } from '../core/outcome.js';
import type { ExecutionContext, NormalizedToolCall, ToolCallResult } from '../core/types.js';
import type { AuditRecord, StageDecision, StageName } from '../core/audit-record.js';
import { buildAuditRecord, redactArguments } from './build-audit-record.js';
import {
  unverifiedPrincipal,
  type CallState,
  type PrincipalRefusal,
  type SignedIngress,
} from './call-state.js';
import type { PipelineDeps } from './deps.js';
import { toResultError } from '../core/result-error.js';
import type { Layer, Next, PipelineStep, Stage, StageResult, Verdict } from './stage.js';

/**
 * Observes one step's work, e.g. with a span around it: a stage's decision, or a layer's whole work
 * including the layers it wraps. The hook must call `inner` once; `inner` runs the step and
 * resolves its own decision (as recorded in the audit record). The hook cannot change the call: the pipeline ignores what it
 * returns, and runs the layer itself if the hook fails before calling `inner`.
 */
export type AroundLayer = (
  name: StageName,
  state: CallState,
  inner: () => Promise<StageDecision>,
) => Promise<unknown>;

/** Per-run options. */
export interface RunOptions {
  /** Aborted when the caller gives up (shutdown, batch deadline); stages that wait must honour it. */
  readonly signal?: AbortSignal;
  /** The idempotency key the call arrived with, computed once by the SDK before the first publish. */
  readonly idempotencyKey?: string;
  /** Observes each layer of this run (tracing puts a span around each); never changes a decision. */
  readonly aroundLayer?: AroundLayer;
  /**
   * A call from outside whose principal is not verified and whose arguments are not parsed yet (the
   * executor's calls): the run starts at the ingress stages (`verify-principal`, `parse-arguments`),
   * which establish `ctx.principal` and `call.arguments`; what the caller put there is ignored.
   * Without it the caller vouches for both (an in-process embedding that verified its principal
   * itself) and the run starts after the ingress stages.
   */
  readonly signed?: SignedIngress;
}

/** The outcome of one run: the one terminal result for the call and the one audit record of it. */
export interface PipelineRun {
  readonly result: ToolCallResult;
  readonly audit: AuditRecord;
  /** Why the caller's principal was refused, when it was (signed runs only). */
  readonly principalRefusal?: PrincipalRefusal;
}

/**
 * The stages that turn a call from outside into a trusted one, in their order: they lead the step
 * list, and only a signed run passes through them (see `RunOptions.signed`).
 */
export const INGRESS_STAGES: readonly StageName[] = Object.freeze(['verify-principal', 'parse-arguments']);

/** How the layers ended the call, before it is turned into a result. */
interface Ending {
  readonly outcome: Outcome;
  readonly payload?: unknown;
  readonly error?: ToolgateError;
}

/**
 * The one entry point every tool call passes through.
 *
 * Composes the steps as an onion, outermost first (koa-compose's model): a {@link Stage} decides
 * before the steps inside it and `continue` runs them; a {@link Layer} wraps them, doing work before
 * and after `await next()` (the idempotency layer settles its claim there, whatever the inner
 * layers did). `next()` runs at most once per layer. Every decision is timed with `deps.clock` and
 * recorded, refusals included, in order, and reported to `deps.observer` (whose failures are
 * ignored: observation never changes a decision). A pass is recorded when the layer calls `next`.
 *
 * - `refuse` ends the call with the outcome of the error's code (`outcomeForCode`).
 * - `finish` ends it with the outcome the layer chose (a duplicate, an unresolved call).
 * - A layer that throws (or returns something that is not a verdict, or claims `done` without
 *   running the layers inside it) is treated as refusing with the classified error, and the layers
 *   outside it receive that verdict from `next()`. One exception keeps invariant 3: if the tool has
 *   already been invoked in this run and is state-changing, an unexpected throw means the effect is
 *   unknown, so the outcome is UNRESOLVED, never a failure.
 * - When every step passes, the outcome is SUCCESS with `state.output` as payload.
 *
 * A signed run (`RunOptions.signed`) starts at the ingress stages, which verify the caller and
 * parse the arguments; any other run starts after them (see libs/pipeline/README.md).
 *
 * `run` is total: it never throws and never rejects, and yields exactly one result whose `callId`
 * is the call's id. It performs no retries itself (the execute stage owns retries); running the same
 * call twice is made safe by the idempotency layer, not here.
 */
export class GuardPipeline {
  readonly #deps: PipelineDeps;
  readonly #steps: readonly PipelineStep[];
  /** How many leading steps are ingress stages: 0, or all of {@link INGRESS_STAGES}. */
  readonly #ingress: number;

  /**
   * `steps`: outermost first; the guard pipeline's order is `STAGES` in libs/guards/stages.ts.
   * Throws when an ingress stage stands anywhere but at the head of the list, in
   * {@link INGRESS_STAGES}' order: a stage running before verification would judge an unverified
   * caller.
   */
  constructor(deps: PipelineDeps, steps: readonly PipelineStep[]) {
    this.#deps = deps;
    this.#steps = Object.freeze([...steps]);
    this.#ingress = ingressCount(this.#steps);
  }

  async run(call: NormalizedToolCall, ctx: ExecutionContext, opts: RunOptions = {}): Promise<PipelineRun> {
    const startedAtMs = this.#now();
    const { signed } = opts;
    const state: CallState = {
      ...(signed === undefined
        ? { call, ctx }
        : {
            call: { ...call, arguments: {} },
            // Read defensively: run() is total even for a context that is not one.
            ctx: {
              ...ctx,
              principal: unverifiedPrincipal(String((ctx as Partial<ExecutionContext> | null)?.tenant ?? '')),
            },
            signed,
          }),
      ...(opts.idempotencyKey === undefined ? {} : { providedKey: opts.idempotencyKey }),
      signal: opts.signal ?? new AbortController().signal,
      toolInvocations: 0,
      attempts: [],
    };
    const decisions: StageDecision[] = [];
    let ending: Ending;
    try {
      const verdict =
        signed === undefined
          ? await this.#dispatch(this.#ingress, state, decisions, opts.aroundLayer)
          : this.#ingress === 0
            ? // Fail closed: nothing may run for a caller no stage of this pipeline can verify.
              ({
                kind: 'refuse',
                error: wiringError('a signed call reached a pipeline without ingress stages'),
              } as const)
            : await this.#dispatch(0, state, decisions, opts.aroundLayer);
      ending = endingOf(verdict, state);
    } catch (err) {
      // Only a defect in the composition itself lands here; layer failures are handled inside it.
      ending = endingOf(this.#verdictForThrow(err, state), state);
    }
    const result = this.#toResult(state, ending);
    const finishedAtMs = this.#now();
    let audit: AuditRecord;
    try {
      audit = buildAuditRecord({
        state,
        outcome: result.outcome,
        ...(ending.error === undefined ? {} : { errorCode: ending.error.code }),
        finishPayload: ending.payload,
        decisions,
        startedAtMs,
        finishedAtMs,
        policyVersion: this.#deps.policy.version,
      });
    } catch {
      audit = minimalAudit(state, result, decisions, startedAtMs, finishedAtMs);
    }
    return {
      result,
      audit,
      ...(state.principalRefusal === undefined ? {} : { principalRefusal: state.principalRefusal }),
    };
  }

  /**
   * Runs the steps from `i` on, and through them the steps inside; resolves the verdict, never
   * rejects. Consecutive stages run in one loop (each decision observed on its own, then the next
   * stage); a layer is observed whole, with the steps inside it.
   */
  async #dispatch(
    i: number,
    state: CallState,
    decisions: StageDecision[],
    around: AroundLayer | undefined,
  ): Promise<Verdict> {
    for (let step = this.#steps[i]; step !== undefined; step = this.#steps[++i]) {
      if ('wrap' in step) return this.#layer(i, step, state, decisions, around);
      const decided =
        around === undefined
          ? await this.#stage(step, state, decisions)
          : await this.#observedStage(step, state, decisions, around);
      if (decided.kind !== 'continue') return decided;
    }
    return DONE;
  }

  /** Runs one stage and records its decision (also passed to `seen`); never rejects. */
  async #stage(
    step: Stage,
    state: CallState,
    decisions: StageDecision[],
    seen?: (decision: StageDecision) => void,
  ): Promise<StageResult> {
    const t0 = this.#now();
    let decided: StageResult;
    let decision: StageDecision;
    try {
      const result = await step.run(state, this.#deps);
      if (!isStageResult(result)) throw wiringError(`stage ${step.name} returned no decision`);
      decision =
        result.kind === 'continue'
          ? passDecision(step.name, result.reason, this.#since(t0))
          : endDecision(step.name, result, this.#since(t0));
      decided = result;
    } catch (err) {
      decided = this.#verdictForThrow(err, state);
      decision = failDecision(step.name, decided, this.#since(t0));
    }
    seen?.(decision);
    this.#record(state, decisions, decision);
    return decided;
  }

  /** {@link #stage} under the observer's hook, which is told the stage's decision. */
  #observedStage(
    step: Stage,
    state: CallState,
    decisions: StageDecision[],
    around: AroundLayer,
  ): Promise<StageResult> {
    let own: StageDecision | undefined;
    return observed(
      around,
      step.name,
      state,
      () => this.#stage(step, state, decisions, (decision) => (own = decision)),
      () => own,
    );
  }

  /**
   * Runs layer `i` around the steps inside it (its `next`), observed whole; records the layer's
   * pass when it enters them, or its own end when it does not; never rejects.
   */
  #layer(
    i: number,
    step: Layer,
    state: CallState,
    decisions: StageDecision[],
    around: AroundLayer | undefined,
  ): Promise<Verdict> {
    const t0 = this.#now();
    let own: StageDecision | undefined;
    const record = (decision: StageDecision): void => {
      own = decision;
      this.#record(state, decisions, decision);
    };
    let entered = false;
    const next: Next = (passReason) => {
      if (entered) return Promise.reject(wiringError(`layer ${step.name} called next() more than once`));
      entered = true;
      record(passDecision(step.name, passReason, this.#since(t0)));
      return this.#dispatch(i + 1, state, decisions, around);
    };
    const body = async (): Promise<Verdict> => {
      let verdict: Verdict;
      try {
        verdict = await step.wrap(state, this.#deps, next);
        if (!isVerdict(verdict)) throw wiringError(`layer ${step.name} returned no verdict`);
        if (verdict.kind === 'done' && !entered) {
          throw wiringError(`layer ${step.name} ended the call as done without running the layers inside it`);
        }
      } catch (err) {
        const failed = this.#verdictForThrow(err, state);
        record(failDecision(step.name, failed, this.#since(t0)));
        return failed;
      }
      if (!entered && verdict.kind !== 'done') record(endDecision(step.name, verdict, this.#since(t0)));
      return verdict;
    };
    return around === undefined ? body() : observed(around, step.name, state, body, () => own);
  }

  #verdictForThrow(err: unknown, state: CallState): Exclude<Verdict, { kind: 'done' }> {
    const error = safeClassify(err);
    if (state.toolInvocations > 0 && state.tool?.stateChanging !== false) {
      const unresolved = new ToolgateError(
        'UNRESOLVED',
        'The action may or may not have been applied. It is being checked; do not repeat it.',
        { cause: error },
      );
      return {
        kind: 'finish',
        outcome: 'UNRESOLVED',
        error: unresolved,
        reason: 'an unexpected failure after the tool ran; the outcome is unknown',
      };
    }
    return { kind: 'refuse', error };
  }

  #toResult(state: CallState, ending: Ending): ToolCallResult {
    const idempotencyKey = state.idempotencyKey ?? state.providedKey;
    return {
      callId: state.call.id,
      tool: state.tool?.name ?? state.call.name,
      outcome: ending.outcome,
      ...(ending.payload === undefined ? {} : { payload: ending.payload }),
      ...(ending.error === undefined ? {} : { error: toResultError(ending.error) }),
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      toolInvocations: state.toolInvocations,
    };
  }

  #record(state: CallState, decisions: StageDecision[], decision: StageDecision): void {
    decisions.push(decision);
    try {
      this.#deps.observer?.onStage?.(state.tool?.name ?? state.call.name, decision);
    } catch {
      // An observer is for metrics and logs; its failure must not change the call's outcome.
    }
  }

  #now(): number {
    return this.#deps.clock.now();
  }

  #since(t0: number): number {
    return Math.max(0, this.#now() - t0);
  }
}

const DONE: Verdict = Object.freeze({ kind: 'done' });

/** See the constructor of {@link GuardPipeline}. */
function ingressCount(steps: readonly PipelineStep[]): number {
  const names = steps.map((step) => step.name);
  const leading = INGRESS_STAGES.every((name, i) => names[i] === name) ? INGRESS_STAGES.length : 0;
  const misplaced = names.findIndex((name, i) => i >= leading && INGRESS_STAGES.includes(name));
  if (misplaced !== -1) {
    throw new Error(
      `stage ${names[misplaced]} must lead the pipeline, in the order ${INGRESS_STAGES.join(', ')}`,
    );
  }
  return leading;
}

/** The decision of a step that let the call through to the steps after (or inside) it. */
function passDecision(stage: StageName, reason: string | undefined, durationMs: number): StageDecision {
  return { stage, decision: 'pass', ...(reason === undefined ? {} : { reason }), durationMs };
}

/** The decision of a step that threw: `failed` is what {@link GuardPipeline} made of the throw. */
function failDecision(
  stage: StageName,
  failed: Exclude<Verdict, { kind: 'done' }>,
  durationMs: number,
): StageDecision {
  return {
    stage,
    decision: 'refuse',
    reason: failed.error?.message ?? 'The call could not be processed.',
    ...(failed.error === undefined ? {} : { code: failed.error.code }),
    durationMs,
  };
}

/** The decision of a step that ended the call itself, without running the steps after it. */
function endDecision(
  stage: StageName,
  verdict: Exclude<Verdict, { kind: 'done' }>,
  durationMs: number,
): StageDecision {
  if (verdict.kind === 'refuse') {
    const reason = verdict.reason ?? verdict.error.message;
    return { stage, decision: 'refuse', reason, code: verdict.error.code, durationMs };
  }
  return {
    stage,
    decision: 'short-circuit',
    reason: verdict.reason,
    ...(verdict.error === undefined ? {} : { code: verdict.error.code }),
    durationMs,
  };
}

/**
 * Runs `body` under an observer's hook; the verdict is always `body`'s own, and `body` runs once
 * whatever the hook does (see {@link AroundLayer}). `own` reads the layer's recorded decision.
 */
async function observed<T>(
  around: AroundLayer,
  name: StageName,
  state: CallState,
  body: () => Promise<T>,
  own: () => StageDecision | undefined,
): Promise<T> {
  let ran: Promise<T> | undefined;
  const once = (): Promise<T> => (ran ??= body());
  const decided = async (): Promise<StageDecision> => {
    await once();
    return own() ?? { stage: name, decision: 'pass', durationMs: 0 };
  };
  try {
    await around(name, state, decided);
  } catch {
    // Observation never changes a decision; a failing hook only loses its own record.
  }
  return once();
}

function endingOf(verdict: Verdict, state: CallState): Ending {
  switch (verdict.kind) {
    case 'done':
      return { outcome: 'SUCCESS', ...(state.output === undefined ? {} : { payload: state.output }) };
    case 'refuse':
      return { outcome: verdict.error.outcome, error: verdict.error };
    case 'finish':
      return {
        outcome: verdict.outcome,
        ...(verdict.payload === undefined ? {} : { payload: verdict.payload }),
        ...(verdict.error === undefined ? {} : { error: verdict.error }),
      };
  }
}

function wiringError(detail: string): ToolgateError {
  return new ToolgateError('INTERNAL', 'The call could not be processed.', { cause: new Error(detail) });
}

function isStageResult(value: unknown): value is StageResult {
  if (value === null || typeof value !== 'object') return false;
  const v = value as { kind?: unknown; error?: unknown; outcome?: unknown };
  if (v.kind === 'continue') return true;
  if (v.kind === 'refuse') return v.error instanceof ToolgateError;
  return v.kind === 'finish' && typeof v.outcome === 'string';
}

function isVerdict(value: unknown): value is Verdict {
  if (value !== null && typeof value === 'object' && (value as { kind?: unknown }).kind === 'done')
    return true;
  return isStageResult(value) && value.kind !== 'continue';
}

function safeClassify(err: unknown): ToolgateError {
  try {
    return classify(err);
  } catch {
    // classify is total by contract; this keeps run() total even if that contract is broken.
    return new ToolgateError('INTERNAL', 'The call could not be processed.', { cause: err });
  }
}

/** An audit record built only from fields that cannot throw, for a context too malformed to read. */
function minimalAudit(
  state: CallState,
  result: ToolCallResult,
  decisions: readonly StageDecision[],
  startedAtMs: number,
  finishedAtMs: number,
): AuditRecord {
  const ctx = (state.ctx ?? {}) as Partial<ExecutionContext>;
  return {
    callId: String(state.call.id),
    tool: String(state.call.name),
    principalId: String(ctx.principal?.id ?? ''),
    tenant: String(ctx.tenant ?? ''),
    taskId: String(ctx.taskId ?? ''),
    step: typeof ctx.step === 'number' ? ctx.step : -1,
    index: typeof ctx.index === 'number' ? ctx.index : -1,
    traceId: String(ctx.traceId ?? ''),
    arguments: redactArguments(state.call.arguments, undefined),
    outcome: result.outcome,
    ...(result.error === undefined ? {} : { errorCode: result.error.code }),
    decisions: [...decisions],
    attempts: [...state.attempts],
    startedAtMs,
    finishedAtMs,
  };
}
