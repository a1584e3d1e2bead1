import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import {
  attemptResultLabel,
  deadLetterReasonLabel,
  decisionLabel,
  outcomeLabel,
  stageLabel,
  toolLabel,
  type KnownToolPredicate,
} from './metric-labels.js';
import { finiteOrZero, registerSourceGauges, type MetricSources } from './source-gauges.js';

/** Tool latencies run from a cache hit (~1 ms) to a slow downstream near its timeout (~1 min). */
export const TOOL_LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
/** Guard stages are mostly sub-millisecond checks; `execute` includes the tool, so the top matches it. */
export const STAGE_LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
/** Tool calls a task needed; a rising average is the early sign of a schema regression. */
export const TASK_TOOL_CALL_BUCKETS: readonly number[] = [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 30, 50];
/** Token equivalents of one call's arguments or result (libs/cost `tokenEquivalents`). */
export const TOKEN_BUCKETS: readonly number[] = [10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 25_000];

/** Waits for a downstream's outbound budget: none at all up to a backed-up queue near a tool's timeout. */
export const OUTBOUND_WAIT_BUCKETS_SECONDS: readonly number[] = [
  0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** How a finished task ended, for the tool-calls-per-task histogram. */
export type TaskStatus = 'succeeded' | 'failed';

/** What {@link createToolgateMetrics} needs; every source is optional (a service wires its own). */
export interface ToolgateMetricsOptions extends MetricSources {
  /** Decides the tool label: names it rejects are counted as "unknown" (see metric-labels.ts). */
  readonly isKnownTool: KnownToolPredicate;
  /**
   * Downstreams with an outbound budget: their wait series exist at 0 from the start, so the first
   * waits already show in a `rate()` (a series born with its first observation does not).
   */
  readonly outboundDownstreams?: readonly string[];
}

/**
 * toolgate's metrics in one registry. Recording methods take raw values and map them to the closed
 * label sets of metric-labels.ts, so no caller can put a call id, principal, argument or an
 * invented tool name into a label. Recording never throws.
 */
export interface ToolgateMetrics {
  readonly registry: Registry;
  /** The label a tool name is counted under ("unknown" for names outside the registry). */
  toolLabel(name: string): string;
  /** One finished call: latency and outcome; DUPLICATE and RATE_LIMITED are also counted apart. */
  observeCall(call: ObservedCall): void;
  /** One stage decision (the pipeline reports every stage of every call). */
  observeStage(stage: string, decision: string, durationMs: number): void;
  /** One invocation of a tool (attempt numbers start at 1); attempts after the first count as retries. */
  observeAttempt(tool: string, attempt: number, result: string): void;
  /** One dead letter published (or received, in the service that stores them), by reason. */
  observeDeadLetter(reason: string): void;
  /** A claim recreated for a key whose completed record had expired: the call runs again. */
  observeClaimAfterExpiry(tool: string): void;
  /** A task finished after `toolCalls` tool calls. */
  observeTaskCompleted(toolCalls: number, status: TaskStatus): void;
  /** The shadow policy disagreed with the active one (`shadowAllowed`: what the shadow said). */
  observeShadowDisagreement(tool: string, shadowAllowed: boolean): void;
  /** A settled call's contribution to an aggregate fact was lost (store failure). */
  observeFactRecordFailure(tool: string): void;
  /**
   * Shows 0 lost fact contributions for these tools (those whose rules read facts) until one is
   * lost, so a dashboard or alert sees "none" rather than "no data".
   */
  declareFactTools(tools: readonly string[]): void;
  /**
   * An outbound token of `downstream` was taken after waiting `waitedMs` (0 when the budget had
   * one). Downstream names come from the catalog's outbound limits, a closed set.
   */
  observeOutboundWait(downstream: string, waitedMs: number): void;
  /** Marks a call as running; the returned function (idempotent) marks it finished. */
  callStarted(): () => void;
}

/** One finished call as {@link ToolgateMetrics.observeCall} takes it. */
export interface ObservedCall {
  readonly tool: string;
  readonly outcome: string;
  readonly durationMs: number;
  /** Token equivalents of the arguments and of what went back to the model; omitted → not recorded. */
  readonly inputTokens?: number;
  readonly outputTokens?: number;
}

/**
 * Creates toolgate's metrics in `registry` (never prom-client's global default, so two services or
 * two tests in one process do not collide). Calling it twice on one registry throws, as prom-client
 * refuses duplicate names.
 *
 * Gauges fed by sources (breaker state, reconciliation case counts and oldest-case ages, consumer
 * lag) are computed at scrape time and reset first, so a downstream or partition that disappears
 * stops being reported. A source that throws or exceeds `sourceTimeoutMs` leaves its gauge empty for that scrape and increments
 * `toolgate_metrics_source_errors_total{source}`; the scrape itself still succeeds.
 */
export function createToolgateMetrics(registry: Registry, options: ToolgateMetricsOptions): ToolgateMetrics {
  const registers = [registry];

  const callDuration = new Histogram({
    name: 'toolgate_tool_call_duration_seconds',
    help: 'Time from entering the guard pipeline to the terminal result, per tool and outcome.',
    labelNames: ['tool', 'outcome'] as const,
    buckets: [...TOOL_LATENCY_BUCKETS_SECONDS],
    registers,
  });
  const calls = new Counter({
    name: 'toolgate_tool_calls_total',
    help: 'Tool calls that reached a terminal result, per tool and outcome.',
    labelNames: ['tool', 'outcome'] as const,
    registers,
  });
  const stageDuration = new Histogram({
    name: 'toolgate_stage_duration_seconds',
    help: 'Time one guard stage took to decide, per stage and decision.',
    labelNames: ['stage', 'decision'] as const,
    buckets: [...STAGE_LATENCY_BUCKETS_SECONDS],
    registers,
  });
  const attempts = new Counter({
    name: 'toolgate_tool_attempts_total',
    help: 'Invocations of a tool, per tool and result ("ok" or the error code).',
    labelNames: ['tool', 'result'] as const,
    registers,
  });
  const retries = new Counter({
    name: 'toolgate_tool_retries_total',
    help: 'Invocations of a tool after the first for the same call.',
    labelNames: ['tool'] as const,
    registers,
  });
  const replays = new Counter({
    name: 'toolgate_idempotent_replays_total',
    help: 'Calls answered with the stored result of an earlier call with the same idempotency key.',
    labelNames: ['tool'] as const,
    registers,
  });
  const claimsAfterExpiry = new Counter({
    name: 'toolgate_idempotency_claims_after_expiry_total',
    help: 'Calls claimed again after the idempotency record of their completed earlier run expired (older than the retention): they run again.',
    labelNames: ['tool'] as const,
    registers,
  });
  const shadowDisagreements = new Counter({
    name: 'toolgate_policy_shadow_disagreements_total',
    help: 'Calls the shadow (candidate) policy judged otherwise than the active one; shadow="allow" means the candidate would have let a refused call through, "refuse" the reverse.',
    labelNames: ['tool', 'shadow'] as const,
    registers,
  });
  const factRecordFailures = new Counter({
    name: 'toolgate_policy_fact_record_failures_total',
    help: 'Settled calls whose contribution to an aggregate fact of the business rules could not be recorded: a limit over that fact may let more through.',
    labelNames: ['tool'] as const,
    registers,
  });
  const rateLimited = new Counter({
    name: 'toolgate_rate_limited_total',
    help: 'Calls refused by the rate limiter.',
    labelNames: ['tool'] as const,
    registers,
  });
  const deadLetters = new Counter({
    name: 'toolgate_dead_letters_total',
    help: 'Dead letters, by reason.',
    labelNames: ['reason'] as const,
    registers,
  });
  const inFlight = new Gauge({
    name: 'toolgate_calls_in_flight',
    help: 'Calls inside the guard pipeline right now.',
    registers,
  });
  const taskToolCalls = new Histogram({
    name: 'toolgate_task_tool_calls',
    help: 'Tool calls one completed task needed, by how the task ended.',
    labelNames: ['status'] as const,
    buckets: [...TASK_TOOL_CALL_BUCKETS],
    registers,
  });
  const tokens = new Histogram({
    name: 'toolgate_tool_call_tokens',
    help: 'Token equivalents per call: arguments in, result out (_sum is the total for cost attribution).',
    labelNames: ['tool', 'direction'] as const,
    buckets: [...TOKEN_BUCKETS],
    registers,
  });
  const outboundWait = new Histogram({
    name: 'toolgate_outbound_wait_seconds',
    help: "Time a call waited for its downstream's shared outbound budget before being sent.",
    labelNames: ['downstream'] as const,
    buckets: [...OUTBOUND_WAIT_BUCKETS_SECONDS],
    registers,
  });
  for (const downstream of options.outboundDownstreams ?? []) outboundWait.zero({ downstream });
  registerSourceGauges(registry, options);

  const tool = (name: string) => toolLabel(name, options.isKnownTool);
  const safely = (fn: () => void): void => {
    try {
      fn();
    } catch {
      // Metrics are bookkeeping; a bad value must not fail the call being measured.
    }
  };

  return {
    registry,
    toolLabel: tool,
    observeCall(call) {
      safely(() => {
        const labels = { tool: tool(call.tool), outcome: outcomeLabel(call.outcome) };
        calls.inc(labels);
        callDuration.observe(labels, seconds(call.durationMs));
        if (labels.outcome === 'DUPLICATE') replays.inc({ tool: labels.tool });
        if (labels.outcome === 'RATE_LIMITED') rateLimited.inc({ tool: labels.tool });
        if (call.inputTokens !== undefined) {
          tokens.observe({ tool: labels.tool, direction: 'in' }, finiteOrZero(call.inputTokens));
        }
        if (call.outputTokens !== undefined) {
          tokens.observe({ tool: labels.tool, direction: 'out' }, finiteOrZero(call.outputTokens));
        }
      });
    },
    observeStage(stage, decision, durationMs) {
      safely(() =>
        stageDuration.observe(
          { stage: stageLabel(stage), decision: decisionLabel(decision) },
          seconds(durationMs),
        ),
      );
    },
    observeAttempt(name, attempt, result) {
      safely(() => {
        const label = tool(name);
        attempts.inc({ tool: label, result: attemptResultLabel(result) });
        if (attempt > 1) retries.inc({ tool: label });
      });
    },
    observeDeadLetter(reason) {
      safely(() => deadLetters.inc({ reason: deadLetterReasonLabel(reason) }));
    },
    observeClaimAfterExpiry(name) {
      safely(() => claimsAfterExpiry.inc({ tool: tool(name) }));
    },
    observeShadowDisagreement(name, shadowAllowed) {
      safely(() => shadowDisagreements.inc({ tool: tool(name), shadow: shadowAllowed ? 'allow' : 'refuse' }));
    },
    observeFactRecordFailure(name) {
      safely(() => factRecordFailures.inc({ tool: tool(name) }));
    },
    declareFactTools(names) {
      safely(() => {
        for (const name of names) factRecordFailures.inc({ tool: tool(name) }, 0);
      });
    },
    observeTaskCompleted(toolCalls, status) {
      safely(() =>
        taskToolCalls.observe(
          { status: status === 'succeeded' ? 'succeeded' : 'failed' },
          finiteOrZero(toolCalls),
        ),
      );
    },
    observeOutboundWait(downstream, waitedMs) {
      safely(() => outboundWait.observe({ downstream }, seconds(waitedMs)));
    },
    callStarted() {
      inFlight.inc();
      let done = false;
      return () => {
        if (done) return;
        done = true;
        inFlight.dec();
      };
    },
  };
}

function seconds(ms: number): number {
  return finiteOrZero(ms) / 1000;
}
