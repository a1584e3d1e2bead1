import type { PolicyContext } from '../core/audit-record.js';
import type { AggregateFact, FactSeries } from '../core/aggregate-fact.js';
import { ToolgateError } from '../core/errors.js';
import { idempotencyKey } from '../core/idempotency-key.js';
import type { CallState } from '../pipeline/call-state.js';
import type { FactValues, PipelineDeps, PolicyDecision } from '../pipeline/deps.js';
import { requireArgs, requireTool } from '../pipeline/stage-preconditions.js';
import { CONTINUE, type GuardStage, type StageResult } from '../pipeline/stage.js';
import { factSeries, factText } from '../policy/aggregate-fact.js';
import { resourceKeyOf } from './claim-record.js';

/**
 * Stage 4: asks `deps.policy` whether this call, with its validated arguments, its verified
 * principal and the aggregate facts its rules read, is within policy right now.
 *
 * - Facts (`policy.factsOf(tool)`) are read from `deps.facts` in one request, without side effects,
 *   each as the total would stand with this call counted; the series are kept on the state for the
 *   idempotency layer to add this call to once its effect settled. An unreachable fact store
 *   refuses DEPENDENCY_UNAVAILABLE (retryable): a limit that cannot be read is not passed.
 * - A violation refuses with POLICY_VIOLATION carrying the rule's actionable reason. It is
 *   retryable only when the rule names an alternative, which becomes the suggested fix: without
 *   one, the model would only resend the same arguments hoping the check was flaky.
 * - With `deps.shadowPolicy`, the candidate judges the same call with the same facts; its decision
 *   goes into the audit record and a disagreement to `observer.onShadowDisagreement`. It never
 *   changes the answer, and a candidate that throws is recorded as nothing.
 * - What the rules knew (version, roles, facts) is kept on the state for the audit record.
 */
export const businessRulesStage: GuardStage = async (state, deps) => {
  const tool = requireTool(state, 'business-rules');
  const args = requireArgs(state, 'business-rules');
  const facts = factsRead(deps, tool.name);
  let values: FactValues = {};
  if (facts.length > 0) {
    const read = await readFacts(state, deps, facts);
    if ('refusal' in read) return read.refusal;
    values = read.values;
  }
  const decision = deps.policy.evaluate(tool, args, state.ctx, values);
  const shadow = shadowDecision(state, deps, values, decision);
  state.policy = {
    version: deps.policy.version,
    roles: [...(state.ctx.principal.roles ?? [])],
    ...(facts.length === 0 ? {} : { facts: factTexts(facts, values) }),
    ...(decision.allowed ? {} : { ruleId: decision.ruleId }),
    ...(shadow === undefined ? {} : { shadow }),
  };
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
};

/** The facts the active and shadow policies read about this tool; the active one's on a name clash. */
function factsRead(deps: PipelineDeps, tool: string): AggregateFact[] {
  const byName = new Map<string, AggregateFact>();
  for (const fact of [...(deps.shadowPolicy?.factsOf(tool) ?? []), ...deps.policy.factsOf(tool)]) {
    byName.set(fact.name, fact);
  }
  return [...byName.values()];
}

async function readFacts(
  state: CallState,
  deps: PipelineDeps,
  facts: readonly AggregateFact[],
): Promise<{ values: FactValues } | { refusal: StageResult }> {
  if (deps.facts === undefined) {
    return {
      refusal: refuse('INTERNAL', 'The business rules read aggregate facts, but no fact store is set up.'),
    };
  }
  const tool = state.tool!;
  const call = {
    tool: tool.name,
    args: state.args,
    resourceKey: resourceKeyOf(tool, state),
    contributionId: contributionIdOf(state),
  };
  const series: FactSeries[] = facts.map((fact) => factSeries(fact, call, state.ctx));
  let sums: number[];
  try {
    sums = await deps.facts.sum(
      series.map((s) => s.query),
      deps.clock.now(),
    );
  } catch (err) {
    return {
      refusal: {
        kind: 'refuse',
        error: new ToolgateError(
          'DEPENDENCY_UNAVAILABLE',
          'The records the business rules need are unavailable, so this action was not run. Try again shortly.',
          { retryable: true, cause: err },
        ),
      },
    };
  }
  state.factSeries = series;
  const values: Record<string, number> = {};
  series.forEach((s, i) => {
    const sum = sums[i];
    if (s.own !== undefined && typeof sum === 'number') values[s.fact.name] = sum + s.own;
  });
  return { values };
}

function shadowDecision(
  state: CallState,
  deps: PipelineDeps,
  values: FactValues,
  active: PolicyDecision,
): PolicyContext['shadow'] {
  const candidate = deps.shadowPolicy;
  if (candidate === undefined) return undefined;
  let decision: PolicyDecision;
  try {
    decision = candidate.evaluate(state.tool!, state.args, state.ctx, values);
  } catch {
    return undefined;
  }
  if (decision.allowed !== active.allowed) {
    try {
      deps.observer?.onShadowDisagreement?.(state.tool!.name, decision.allowed);
    } catch {
      // An observer never changes the answer.
    }
  }
  return decision.allowed
    ? { version: candidate.version, decision: 'allow' }
    : { version: candidate.version, decision: 'refuse', ruleId: decision.ruleId };
}

function factTexts(facts: readonly AggregateFact[], values: FactValues): Record<string, string> {
  const out: Record<string, string> = {};
  for (const fact of facts) {
    const units = values[fact.name];
    if (units !== undefined) out[fact.name] = factText(fact, units);
  }
  return out;
}

/**
 * The id a call's contributions are recorded under: its idempotency key, which every redelivery and
 * retry of the same logical call shares; the call id when the key cannot be computed. Recomputed
 * from the verified context and the arguments, never taken from the call: a key the call brings
 * could name another call's contribution (and such a call is refused at the idempotency stage).
 */
function contributionIdOf(state: CallState): string {
  try {
    return idempotencyKey(state.ctx, state.call.name, state.call.arguments);
  } catch {
    return state.call.id;
  }
}

function refuse(code: 'INTERNAL', message: string): StageResult {
  return { kind: 'refuse', error: new ToolgateError(code, message) };
}
