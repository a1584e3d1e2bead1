import type { Outcome } from '../core/outcome.js';
import type { ToolgateError } from '../core/errors.js';
import type { StageName } from '../core/audit-record.js';
import type { CallState } from './call-state.js';
import type { PipelineDeps } from './deps.js';

/**
 * What a stage decided.
 * - `continue`: pass to the next stage.
 * - `refuse`: stop; the call's outcome follows from the error's code. Stages 0–4 may only refuse
 *   before any side effect.
 * - `finish`: stop with a complete answer that is not a plain refusal (a duplicate returning the
 *   original result, an UNRESOLVED call).
 */
export type StageResult =
  /** `reason` (optional, model-safe) is recorded on the stage's pass decision, e.g. "read-only". */
  | { readonly kind: 'continue'; readonly reason?: string }
  | {
      readonly kind: 'refuse';
      readonly error: ToolgateError;
      /**
       * Why, for the audit record only, when it says more than the model may be told (a principal
       * verifier's reason). Default: the error's message. Never a secret or a token.
       */
      readonly reason?: string;
    }
  | {
      readonly kind: 'finish';
      readonly outcome: Outcome;
      readonly payload?: unknown;
      readonly error?: ToolgateError;
      readonly reason: string;
    };

/**
 * How the layers from some point inwards ended a call: a stage's `refuse` or `finish`, or `done`
 * when every layer passed (the call succeeded with `state.output`).
 */
export type Verdict = Exclude<StageResult, { kind: 'continue' }> | { readonly kind: 'done' };

/**
 * Runs the layers inside the current one and resolves how they ended the call. It never rejects:
 * a layer that throws is turned into a verdict where it threw. Callable at most once per layer; a
 * second call rejects with an INTERNAL error (a wiring defect, which fails the call closed).
 * `passReason` (model-safe) is recorded on the calling layer's pass decision.
 */
export type Next = (passReason?: string) => Promise<Verdict>;

/**
 * The one signature every guard stage has: a decision made before the inner layers run. A stage may
 * mutate `state` only to add what it owns (see CallState), must not throw for expected refusals
 * (return `refuse`), and any throw is classified by the pipeline as a refusal of that stage.
 */
export type GuardStage = (state: CallState, deps: PipelineDeps) => Promise<StageResult>;

/** A named stage that decides before the layers inside it: `continue` runs them. */
export interface Stage {
  readonly name: StageName;
  readonly run: GuardStage;
}

/**
 * A named layer that wraps the layers inside it (koa-compose's `(ctx, next)`): work before
 * `await next()`, and work after it that must happen whatever the inner layers did. A layer that
 * returns without calling `next` ends the call with its own verdict.
 */
export interface Layer {
  readonly name: StageName;
  readonly wrap: (state: CallState, deps: PipelineDeps, next: Next) => Promise<Verdict>;
}

/** One entry of the pipeline's ordered list: a stage (decides before) or a layer (wraps). */
export type PipelineStep = Stage | Layer;

export const CONTINUE: StageResult = { kind: 'continue' };
