import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { ExecutionContext, NormalizedToolCall } from '../core/types.js';
import type { AttemptRecord, StageDecision } from '../core/audit-record.js';
import { argumentsAsSent } from '../guards/parse-arguments.js';
import type { AroundLayer, PipelineRun, RunOptions } from '../pipeline/guard-pipeline.js';
import { tokenEquivalents } from '../cost/token-equivalents.js';
import {
  childSpanId,
  isValidSpanId,
  isValidTraceId,
  newTraceId,
  SAMPLED_FLAG,
  type HexSource,
  type TraceContext,
} from './trace-context.js';

/**
 * Spans for tool calls through the OpenTelemetry API: one `execute_tool <name>` span
 * per call, one child span per guard stage, and one per tool invocation under the stage that made
 * it. The trace id of every span is the call's `ExecutionContext.traceId` — the same id the audit
 * record, the result and any reconciliation case carry.
 *
 * Exporting is off by default: `@opentelemetry/api` alone is a no-op (spans cost a few allocations
 * and go nowhere). The service processes switch it on from the standard OpenTelemetry variables
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, …; see otel-export.ts); an embedding application registers its
 * own SDK instead.
 *
 * {@link toolgateTracer} returns the API's proxy tracer, which forwards to whatever provider is
 * registered (also one registered after the tracer was obtained), so no toolgate code changes.
 * Use a parent-based sampler: the agent's sampling decision (the `traceparent` flags) is kept.
 */

/** The instrumentation scope name of toolgate's spans. */
export const TOOLGATE_TRACER_NAME = 'toolgate';

/** toolgate's tracer from `provider`, or from the globally registered provider (no-op without an SDK). */
export function toolgateTracer(provider?: TracerProvider): Tracer {
  return (provider ?? trace).getTracer(TOOLGATE_TRACER_NAME);
}

/**
 * The context a call's span starts in, so that its trace id is `traceId`:
 * - `parent` from the same trace: a remote parent with its span id and flags (the agent's span);
 * - otherwise, for a valid `traceId`: a remote parent with a made-up span id and the sampled flag —
 *   the span then hangs under a parent nobody recorded, which backends show as a root with a
 *   missing parent; keeping the join key matters more;
 * - otherwise `parent`'s trace, or a new trace when there is none.
 */
export function parentContext(
  traceId: string,
  parent: TraceContext | null | undefined,
  hex?: HexSource,
): Context {
  if (parent != null && parent.traceId === traceId && isValidSpanId(parent.spanId)) {
    return remote(parent.traceId, parent.spanId, parent.flags);
  }
  if (isValidTraceId(traceId)) return remote(traceId, childSpanId(hex), SAMPLED_FLAG);
  if (parent != null && isValidTraceId(parent.traceId) && isValidSpanId(parent.spanId)) {
    return remote(parent.traceId, parent.spanId, parent.flags);
  }
  return ROOT_CONTEXT;
}

function remote(traceId: string, spanId: string, flags: number): Context {
  return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: flags & 0xff, isRemote: true });
}

/** What {@link CallTracing.run} needs of the pipeline (GuardPipeline has it). */
export interface PipelineRunner {
  run(call: NormalizedToolCall, ctx: ExecutionContext, opts?: RunOptions): Promise<PipelineRun>;
}

/** A pipeline run plus the trace context its outgoing messages should carry. */
export interface TracedRun extends PipelineRun {
  /**
   * Put on every message published for this call (`traceHeaders(traceId, spanId, flags)`), so the
   * consumers' spans are children of the call's span. With a recording span this is that span;
   * with the no-op API it is a fresh span id in the call's trace.
   */
  readonly outgoing: TraceContext;
}

/** Call and stage tracing bound to one tracer. */
export interface CallTracing {
  /**
   * Runs `pipeline.run(call, ctx, options)` inside the call's span (started with
   * `tracer.startActiveSpan`, so instrumented clients the tool uses nest under it when a context
   * manager is registered), with an `aroundLayer` hook that puts one span per layer under the call
   * span — explicitly parented, so they nest correctly without any context manager — and one per
   * tool invocation under the layer that made it. Outcome, retries, token equivalents and the error
   * code are set on the call span when the run ends; the status is ERROR only for EXECUTION_ERROR
   * (refusals are the pipeline working, UNRESOLVED is not a failure). When the call span does not
   * record (no OpenTelemetry SDK registered, or the trace is not sampled), the run goes without
   * layer spans and nothing is computed for attributes nobody reads. Rejects only if
   * `pipeline.run` does (GuardPipeline never does).
   */
  run(
    pipeline: PipelineRunner,
    call: NormalizedToolCall,
    ctx: ExecutionContext,
    options?: RunOptions & { readonly parent?: TraceContext | null },
  ): Promise<TracedRun>;
}

/** Longest tool name or id put on a span; the model chooses these strings. */
const MAX_ATTRIBUTE_CHARS = 256;

/** Creates {@link CallTracing} for `tracer`. */
export function createCallTracing(tracer: Tracer, hex?: HexSource): CallTracing {
  return {
    run(pipeline, call, ctx, options = {}) {
      const { parent, ...runOptions } = options;
      const name = clip(call.name);
      // A signed call's arguments and principal are established inside the run: count the
      // arguments as sent, and name the principal when the run has verified it (annotateCall).
      const { signed } = runOptions;
      return tracer.startActiveSpan(
        `execute_tool ${name}`,
        { kind: SpanKind.INTERNAL, attributes: callAttributes(call, ctx, name, signed === undefined) },
        parentContext(ctx.traceId, parent, hex),
        async (span): Promise<TracedRun> => {
          try {
            const recording = span.isRecording();
            if (recording) {
              const sent =
                signed === undefined ? call : { ...call, arguments: argumentsAsSent(signed.argumentsJson) };
              span.setAttribute('toolgate.input_tokens_equivalent', tokenEquivalents({}, sent).tokensIn);
            }
            // A call span that records nothing (no OpenTelemetry SDK registered, or a trace not
            // sampled) would only parent layer spans that record nothing either: the run goes without
            // the per-layer hook, which costs a span, a context and several promises per layer.
            const ran = recording
              ? await pipeline.run(call, ctx, {
                  ...runOptions,
                  aroundLayer: layerSpans(tracer, trace.setSpan(ROOT_CONTEXT, span)),
                })
              : await pipeline.run(call, ctx, runOptions);
            annotateCall(span, ran);
            return { ...ran, outgoing: outgoingContext(span, ctx.traceId, parent, hex) };
          } catch (err) {
            span.recordException(err instanceof Error ? err : String(err));
            span.setStatus({ code: SpanStatusCode.ERROR });
            throw err;
          } finally {
            span.end();
          }
        },
      );
    },
  };
}

/**
 * One run's layer spans, children of `callContext`. A wrapping layer's span covers the layers inside
 * it; each tool invocation gets its span under the innermost layer that was running when it was
 * recorded (attempts already given a span are not given another by an enclosing layer).
 */
function layerSpans(tracer: Tracer, callContext: Context): AroundLayer {
  let spannedAttempts = 0;
  return (name, state, inner) =>
    tracer.startActiveSpan(
      `toolgate.stage ${name}`,
      { kind: SpanKind.INTERNAL, attributes: { 'toolgate.stage': name } },
      callContext,
      async (span): Promise<void> => {
        try {
          annotateStage(span, await inner());
        } finally {
          attemptSpans(tracer, span, state.attempts.slice(spannedAttempts));
          spannedAttempts = state.attempts.length;
          span.end();
        }
      },
    );
}

/** Tool invocations are timed by the pipeline's clock; their spans are written after the fact. */
function attemptSpans(tracer: Tracer, stageSpan: Span, attempts: readonly AttemptRecord[]): void {
  if (attempts.length === 0) return;
  const parent = trace.setSpan(ROOT_CONTEXT, stageSpan);
  for (const a of attempts) {
    const span = tracer.startSpan(
      'toolgate.attempt',
      {
        kind: SpanKind.CLIENT,
        startTime: a.startedAtMs,
        attributes: { 'toolgate.attempt': a.attempt, 'toolgate.attempt.result': a.result },
      },
      parent,
    );
    if (a.result !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: a.result });
    span.end(a.startedAtMs + a.durationMs);
  }
}

function callAttributes(
  call: { readonly id: string },
  ctx: ExecutionContext,
  name: string,
  verified: boolean,
): Attributes {
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': name,
    'gen_ai.tool.call.id': clip(call.id),
    'toolgate.tenant': ctx.tenant,
    ...(verified ? { 'toolgate.principal.id': ctx.principal.id } : {}),
    'toolgate.task.id': ctx.taskId,
    'toolgate.step': ctx.step,
    'toolgate.call.index': ctx.index,
  };
}

function annotateCall(span: Span, ran: PipelineRun): void {
  if (!span.isRecording()) return;
  const { result, audit } = ran;
  const attributes: Attributes = {
    'toolgate.outcome': result.outcome,
    'toolgate.principal.id': audit.principalId,
    'toolgate.tool_invocations': result.toolInvocations,
    'toolgate.retry_count': Math.max(0, audit.attempts.length - 1),
    'toolgate.output_tokens_equivalent': tokenEquivalents(result).tokensOut,
  };
  if (audit.toolVersion !== undefined) attributes['gen_ai.tool.version'] = audit.toolVersion;
  if (result.idempotencyKey !== undefined) attributes['toolgate.idempotency_key'] = result.idempotencyKey;
  if (result.error !== undefined) attributes['error.type'] = result.error.code;
  span.setAttributes(attributes);
  if (result.outcome === 'EXECUTION_ERROR') {
    span.setStatus({ code: SpanStatusCode.ERROR, message: result.error?.code ?? 'EXECUTION_ERROR' });
  }
}

function annotateStage(span: Span, own: StageDecision): void {
  span.setAttribute('toolgate.stage.decision', own.decision);
  if (own.code !== undefined) span.setAttribute('error.type', own.code);
}

function outgoingContext(
  span: Span,
  traceId: string,
  parent: TraceContext | null | undefined,
  hex: HexSource | undefined,
): TraceContext {
  const own = span.spanContext();
  if (span.isRecording() && isValidTraceId(own.traceId) && isValidSpanId(own.spanId)) {
    return { traceId: own.traceId, spanId: own.spanId, flags: own.traceFlags };
  }
  const id = isValidTraceId(traceId)
    ? traceId
    : parent != null && isValidTraceId(parent.traceId)
      ? parent.traceId
      : isValidTraceId(own.traceId)
        ? own.traceId
        : newTraceId(hex);
  const flags = parent != null && parent.traceId === id ? parent.flags : SAMPLED_FLAG;
  return { traceId: id, spanId: childSpanId(hex), flags };
}

function clip(text: string): string {
  return text.length > MAX_ATTRIBUTE_CHARS ? text.slice(0, MAX_ATTRIBUTE_CHARS) : text;
}
