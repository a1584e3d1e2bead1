import type { ToolCallResult } from '../core/types.js';
import type { PipelineObserver } from '../pipeline/deps.js';
import type { Clock } from '../core/clock.js';
import type { KnownToolPredicate } from './metric-labels.js';
import type { ToolgateMetrics } from './metrics.js';
import { tokenEquivalents, type CallTokens } from '../cost/token-equivalents.js';

/**
 * A {@link PipelineObserver} that records every stage decision (`toolgate_stage_duration_seconds`),
 * every tool invocation (`toolgate_tool_attempts_total`, retries) and every claim recreated after
 * its record expired (`toolgate_idempotency_claims_after_expiry_total`), shadow-policy
 * disagreements and lost fact contributions (`toolgate_policy_*`). Pass it as
 * `PipelineDeps.observer`; it never throws, so it cannot change a decision.
 */
export function pipelineObserver(metrics: ToolgateMetrics): PipelineObserver {
  return {
    onStage(_tool, decision) {
      metrics.observeStage(decision.stage, decision.decision, decision.durationMs);
    },
    onAttempt(tool, attempt, result) {
      metrics.observeAttempt(tool, attempt, result);
    },
    onClaimAfterExpiry(tool) {
      metrics.observeClaimAfterExpiry(tool);
    },
    onShadowDisagreement(tool, shadowAllowed) {
      metrics.observeShadowDisagreement(tool, shadowAllowed);
    },
    onFactRecordFailure(tool) {
      metrics.observeFactRecordFailure(tool);
    },
  };
}

/** What else {@link recordResult} may count about a call. */
export interface RecordResultOptions {
  /** The call's arguments as the model sent them; recorded as input token equivalents only. */
  readonly arguments?: unknown;
}

/**
 * Records one call's terminal result: latency and count per tool and outcome, idempotent replays,
 * rate-limit refusals, and token equivalents by the cost model's rule (libs/cost
 * `tokenEquivalents`): out = the payload, else the error, the model gets back; in = the tool name
 * and `options.arguments`, recorded only when arguments are given. Call it once per pipeline run,
 * with the run's wall time. Returns the token equivalents it recorded (`tokensIn` 0 without
 * arguments), so whoever reports the call elsewhere states the same figures without computing them
 * again. Never throws.
 */
export function recordResult(
  metrics: ToolgateMetrics,
  result: ToolCallResult,
  durationMs: number,
  options: RecordResultOptions = {},
): CallTokens {
  const withArguments = 'arguments' in options;
  const tokens = tokenEquivalents(
    result,
    withArguments ? { name: result.tool, arguments: options.arguments } : undefined,
  );
  metrics.observeCall({
    tool: result.tool,
    outcome: result.outcome,
    durationMs,
    outputTokens: tokens.tokensOut,
    ...(withArguments ? { inputTokens: tokens.tokensIn } : {}),
  });
  return tokens;
}

/** The part of ToolRegistry a {@link KnownToolPredicate} needs. */
export interface ToolNameSource {
  list(): readonly { readonly name: string }[];
}

/**
 * A {@link KnownToolPredicate} over a tool registry. Names are cached; a miss re-reads the
 * registry at most once per `refreshMs` (default 5000), so a tool registered after start-up is
 * labelled by name within that time, while a model spraying invented names costs a set lookup.
 */
export function knownToolsOf(registry: ToolNameSource, clock: Clock, refreshMs = 5000): KnownToolPredicate {
  let names = new Set<string>();
  let readAtMs = Number.NEGATIVE_INFINITY;
  const reload = () => {
    names = new Set(registry.list().map((e) => e.name));
    readAtMs = clock.now();
  };
  return (name) => {
    if (names.has(name)) return true;
    if (clock.now() - readAtMs >= refreshMs) reload();
    return names.has(name);
  };
}
