import { settle } from '../core/settle.js';
import type { CallState } from './call-state.js';
import type { PipelineDeps } from './deps.js';
import type { GuardStage, StageResult } from './stage.js';

/**
 * Wraps a stage whose decision needs no awaiting as a {@link GuardStage}. Whatever the body throws
 * becomes a rejected promise rather than a synchronous throw, so callers only ever handle rejection.
 */
export function syncStage(body: (state: CallState, deps: PipelineDeps) => StageResult): GuardStage {
  return (state, deps) => settle(() => body(state, deps));
}
