import { CONTINUE } from '../pipeline/stage.js';
import type { GuardStage } from '../pipeline/stage.js';
import { syncStage } from '../pipeline/sync-stage.js';

/**
 * Stage 0: finds the definition the call was made against, through `deps.tools` with the call's
 * pinned version and the context's tenant (so a tenant override wins). Sets `state.tool`.
 *
 * Refuses with the resolver's own error, which is UNKNOWN_TOOL (with a "did you mean") or
 * TOOL_DEPRECATED; both are retryable by default, since the model can pick another tool. No side
 * effects; a tool that does not resolve is never validated, authorized or run.
 */
export const resolveStage: GuardStage = syncStage((state, deps) => {
  const found = deps.tools.resolve(state.call.name, {
    ...(state.call.version === undefined ? {} : { version: state.call.version }),
    tenant: state.ctx.tenant,
  });
  if (!found.ok) return { kind: 'refuse', error: found.error };
  state.tool = found.tool;
  return CONTINUE;
});
