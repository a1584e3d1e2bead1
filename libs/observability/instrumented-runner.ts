import type { ExecutionContext, NormalizedToolCall } from '../core/types.js';
import type { CallTokens } from '../cost/token-equivalents.js';
import { argumentsAsSent } from '../guards/parse-arguments.js';
import type { RunOptions } from '../pipeline/guard-pipeline.js';
import type { Clock } from '../core/clock.js';
import type { ToolgateMetrics } from './metrics.js';
import { recordResult } from './pipeline-metrics.js';
import type { TraceContext } from './trace-context.js';
import {
  createCallTracing,
  toolgateTracer,
  type CallTracing,
  type PipelineRunner,
  type TracedRun,
} from './tracing.js';

/** What {@link instrumentPipeline} adds around each run. */
export interface InstrumentOptions {
  readonly metrics: ToolgateMetrics;
  /** Default: call spans on the global tracer (a no-op until an SDK is registered). */
  readonly tracing?: CallTracing;
  /** Times the run for `toolgate_tool_call_duration_seconds`; use the pipeline's clock. */
  readonly clock: Clock;
}

/** One instrumented run: the traced run, and the token equivalents its metrics recorded. */
export interface InstrumentedRun extends TracedRun {
  /**
   * The call's token equivalents as recorded in `toolgate_tool_call_tokens` (libs/cost
   * `tokenEquivalents`; arguments as sent when the run was signed, else the call's arguments).
   */
  readonly tokens: CallTokens;
}

/** Runs calls like the pipeline does, recording metrics and the call span around each run. */
export interface InstrumentedRunner {
  /** `opts.parent`: the request's `traceparent` (see `readTraceContext`), when it has one. */
  run(
    call: NormalizedToolCall,
    ctx: ExecutionContext,
    opts?: RunOptions & { readonly parent?: TraceContext | null },
  ): Promise<InstrumentedRun>;
}

/**
 * Wraps a pipeline so every run is counted and traced in one place: in-flight gauge up for the
 * duration, the call span around it (see `CallTracing.run`), then `recordResult` with the run's
 * wall time by `clock` and the arguments' token equivalents, which the run returns (`tokens`). The
 * result and audit record are returned unchanged; metrics and tracing never alter them or make a
 * run reject. Structurally a drop-in for anything that takes `{ run(call, ctx, opts) }` (the
 * executor's `CallRunner`).
 *
 * The call's stage spans come with the run (`CallTracing.run` passes the pipeline its
 * `aroundLayer` hook); for stage metrics, construct the pipeline with
 * `observer: pipelineObserver(metrics)`.
 */
export function instrumentPipeline(pipeline: PipelineRunner, options: InstrumentOptions): InstrumentedRunner {
  const { metrics, clock } = options;
  const tracing = options.tracing ?? createCallTracing(toolgateTracer());
  return {
    async run(call, ctx, opts = {}) {
      const finished = metrics.callStarted();
      const startedAtMs = clock.now();
      try {
        const ran = await tracing.run(pipeline, call, ctx, opts);
        const tokens = recordResult(metrics, ran.result, Math.max(0, clock.now() - startedAtMs), {
          arguments: opts.signed === undefined ? call.arguments : argumentsAsSent(opts.signed.argumentsJson),
        });
        return { ...ran, tokens };
      } finally {
        finished();
      }
    },
  };
}
