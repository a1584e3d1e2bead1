import type { Outcome } from '../core/outcome.js';
import type { ToolgateError } from '../core/errors.js';
import type { StageName } from './audit-record.js';
import type { CallState } from './call-state.js';
import type { PipelineDeps } from './deps.js';

/**
 * What a stage decided.
 * - `continue`: pass to the next stage.
 * - `refuse`: stop; the call's outcome follows from the error's code. Stages 0–4 may only refuse
 *   before any side effect.
 * - `finish`: stop with a complete answer that is not a plain refusal (a duplicate returning the
 *   original result, a call settled by a status check, an UNRESOLVED call).
 */
export type StageResult =
  /** `reason` (optional, model-safe) is recorded on the stage's pass decision, e.g. "read-only". */
  | { readonly kind: 'continue'; readonly reason?: string }
  | { readonly kind: 'refuse'; readonly error: ToolgateError }
  | {
      readonly kind: 'finish';
      readonly outcome: Outcome;
      readonly payload?: unknown;
      readonly error?: ToolgateError;
      readonly reason: string;
    };

/**
 * The one signature every guard stage has. A stage may mutate `state` only to add what it owns (see
 * CallState), must not throw for expected refusals (return `refuse`), and any throw is classified by
 * the pipeline as a refusal of that stage.
 */
export type GuardStage = (state: CallState, deps: PipelineDeps) => Promise<StageResult>;

/** A named stage. The ordered array of these lives in libs/guards/stages.ts. */
export interface Stage {
  readonly name: StageName;
  readonly run: GuardStage;
}

export const CONTINUE: StageResult = { kind: 'continue' };
