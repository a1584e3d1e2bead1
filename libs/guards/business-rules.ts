import { ToolgateError } from '../core/errors.js';
import { requireArgs, requireTool } from '../pipeline/stage-preconditions.js';
import { CONTINUE } from '../pipeline/stage.js';
import type { GuardStage } from '../pipeline/stage.js';
import { syncStage } from '../pipeline/sync-stage.js';

/**
 * Stage 4: asks `deps.policy` (pure, data-driven; first violated rule wins) whether this call, with
 * its validated arguments and verified context, is within policy right now.
 *
 * A violation refuses with POLICY_VIOLATION carrying the rule's actionable reason. It is retryable
 * only when the rule names an alternative, which becomes the suggested fix: without one, the model
 * would only resend the same arguments hoping the check was flaky. No side effects.
 */
export const businessRulesStage: GuardStage = syncStage((state, deps) => {
  const tool = requireTool(state, 'business-rules');
  const args = requireArgs(state, 'business-rules');
  const decision = deps.policy.evaluate(tool, args, state.ctx);
  if (decision.allowed) return CONTINUE;
  const alternative = decision.alternative;
  return {
    kind: 'refuse',
    error: new ToolgateError('POLICY_VIOLATION', decision.reason, {
      retryable: alternative !== undefined,
      ...(alternative === undefined ? {} : { suggestedFix: alternative }),
      cause: new Error(`policy ${deps.policy.version} rule ${decision.ruleId}`),
    }),
  };
});
