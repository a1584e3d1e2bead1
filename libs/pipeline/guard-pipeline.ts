import { classify } from '../core/classify.js';
import { ToolgateError } from '../core/errors.js';
import type { Outcome } from '../core/outcome.js';
import type { ExecutionContext, NormalizedToolCall, ToolCallResult } from '../core/types.js';
import { STAGES } from '../guards/stages.js';
import type { AuditRecord, StageDecision } from './audit-record.js';
import { buildAuditRecord, redactArguments } from './build-audit-record.js';
import type { CallState } from './call-state.js';
import type { PipelineDeps } from './deps.js';
import { toResultError } from '../core/result-error.js';
import type { Stage, StageResult } from './stage.js';

/** Per-run options. */
export interface RunOptions {
  /** Aborted when the caller gives up (shutdown, batch deadline); stages that wait must honour it. */
  readonly signal?: AbortSignal;
  /** The idempotency key the call arrived with, computed once by the SDK before the first publish. */
  readonly idempotencyKey?: string;
}

/** The outcome of one run: the one terminal result for the call and the one audit record of it. */
export interface PipelineRun {
  readonly result: ToolCallResult;
  readonly audit: AuditRecord;
}

/** How the stage loop ended, before it is turned into a result. */
interface Ending {
  readonly outcome: Outcome;
  readonly payload?: unknown;
  readonly error?: ToolgateError;
}

/**
 * The one entry point every tool call passes through.
 *
 * Runs the stages in array order, stopping at the first that does not `continue`. Every stage's
 * decision is timed with `deps.clock` and recorded, refusals included, and reported to
 * `deps.observer` (whose failures are ignored: observation never changes a decision).
 *
 * - `refuse` ends the call with the outcome of the error's code (`outcomeForCode`).
 * - `finish` ends it with the outcome the stage chose (a duplicate, a settled or unresolved call).
 * - A stage that throws (or returns something that is not a decision) is treated as refusing with
 *   the classified error. One exception keeps invariant 3: if the tool has already been invoked in
 *   this run and is state-changing, an unexpected throw means the effect is unknown, so the outcome
 *   is UNRESOLVED, never a failure.
 * - When every stage continues, the outcome is SUCCESS with `state.output` as payload.
 *
 * `run` is total: it never throws and never rejects, and yields exactly one result whose `callId`
 * is the call's id. It performs no retries itself (stage 6 owns retries); running the same call
 * twice is made safe by the idempotency stage, not here.
 */
export class GuardPipeline {
  readonly #deps: PipelineDeps;
  readonly #stages: readonly Stage[];

  constructor(deps: PipelineDeps, stages: readonly Stage[] = STAGES) {
    this.#deps = deps;
    this.#stages = stages;
  }

  async run(call: NormalizedToolCall, ctx: ExecutionContext, opts: RunOptions = {}): Promise<PipelineRun> {
    const startedAtMs = this.#now();
    const state: CallState = {
      call,
      ctx,
      ...(opts.idempotencyKey === undefined ? {} : { providedKey: opts.idempotencyKey }),
      signal: opts.signal ?? new AbortController().signal,
      toolInvocations: 0,
      attempts: [],
    };
    const decisions: StageDecision[] = [];
    let ending: Ending;
    try {
      ending = await this.#runStages(state, decisions);
    } catch (err) {
      // Only a defect in the loop itself lands here; stage failures are handled inside it.
      ending = this.#endingForThrow(err, state);
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
      });
    } catch {
      audit = minimalAudit(state, result, decisions, startedAtMs, finishedAtMs);
    }
    return { result, audit };
  }

  async #runStages(state: CallState, decisions: StageDecision[]): Promise<Ending> {
    for (const stage of this.#stages) {
      const t0 = this.#now();
      let outcome: StageResult;
      try {
        outcome = await stage.run(state, this.#deps);
        if (!isStageResult(outcome)) {
          throw new ToolgateError('INTERNAL', 'The call could not be processed.', {
            cause: new Error(`stage ${stage.name} returned no decision`),
          });
        }
      } catch (err) {
        const ending = this.#endingForThrow(err, state);
        this.#record(state, decisions, {
          stage: stage.name,
          decision: 'refuse',
          reason: ending.error?.message ?? 'The call could not be processed.',
          ...(ending.error === undefined ? {} : { code: ending.error.code }),
          durationMs: this.#since(t0),
        });
        return ending;
      }
      const durationMs = this.#since(t0);
      if (outcome.kind === 'continue') {
        this.#record(state, decisions, {
          stage: stage.name,
          decision: 'pass',
          ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
          durationMs,
        });
        continue;
      }
      if (outcome.kind === 'refuse') {
        this.#record(state, decisions, {
          stage: stage.name,
          decision: 'refuse',
          reason: outcome.error.message,
          code: outcome.error.code,
          durationMs,
        });
        return { outcome: outcome.error.outcome, error: outcome.error };
      }
      this.#record(state, decisions, {
        stage: stage.name,
        decision: 'short-circuit',
        reason: outcome.reason,
        ...(outcome.error === undefined ? {} : { code: outcome.error.code }),
        durationMs,
      });
      return {
        outcome: outcome.outcome,
        ...(outcome.payload === undefined ? {} : { payload: outcome.payload }),
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
      };
    }
    return { outcome: 'SUCCESS', ...(state.output === undefined ? {} : { payload: state.output }) };
  }

  #endingForThrow(err: unknown, state: CallState): Ending {
    const error = safeClassify(err);
    if (state.toolInvocations > 0 && state.tool?.stateChanging !== false) {
      const unresolved = new ToolgateError(
        'UNRESOLVED',
        'The action may or may not have been applied. It is being checked; do not repeat it.',
        { cause: error },
      );
      return { outcome: 'UNRESOLVED', error: unresolved };
    }
    return { outcome: error.outcome, error };
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

function isStageResult(value: unknown): value is StageResult {
  if (value === null || typeof value !== 'object') return false;
  const v = value as { kind?: unknown; error?: unknown; outcome?: unknown };
  if (v.kind === 'continue') return true;
  if (v.kind === 'refuse') return v.error instanceof ToolgateError;
  return v.kind === 'finish' && typeof v.outcome === 'string';
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
