import type { Tracer } from '@opentelemetry/api';
import { Counter, type Registry } from 'prom-client';
import {
  PRINCIPAL_REFUSAL_REASONS,
  principalRefusalReason,
  type PrincipalRefusalReason,
} from '../../libs/auth/principal-refusal.js';
import type { BreakerState } from '../../libs/execution/breakers.js';
import type { ConsumerLagReader } from '../../libs/observability/consumer-lag.js';
import { instrumentPipeline } from '../../libs/observability/instrumented-runner.js';
import { createToolgateMetrics, type ToolgateMetrics } from '../../libs/observability/metrics.js';
import {
  knownToolsOf,
  pipelineObserver,
  type ToolNameSource,
} from '../../libs/observability/pipeline-metrics.js';
import { createCallTracing, toolgateTracer, type PipelineRunner } from '../../libs/observability/tracing.js';
import type { PipelineObserver } from '../../libs/pipeline/deps.js';
import type { Clock } from '../../libs/core/clock.js';
import type { CallRunner } from './executor-deps.js';
import { metricsObserver, type ExecutorObserver } from './executor-observer.js';

/** What {@link createExecutorTelemetry} measures and where it reads scrape-time values from. */
export interface ExecutorTelemetryOptions {
  /** The process's registry (never prom-client's global one). */
  readonly registry: Registry;
  /** The catalog's registry: names it lists are tool labels, anything else counts as "unknown". */
  readonly tools: ToolNameSource;
  /** The pipeline's clock: call latency is measured on it. */
  readonly clock: Clock;
  /** Breaker state per downstream, read at scrape time (`ManagedCircuitBreakers.states`). */
  readonly breakerStates?: () => ReadonlyMap<string, BreakerState>;
  /** The executors' group lag on the calls topic, read at scrape time (`kafkaConsumerLag`). */
  readonly consumerLag?: ConsumerLagReader;
  /** Downstreams with an outbound budget (the catalog's `downstreamLimits`), for their wait metric. */
  readonly outboundDownstreams?: readonly string[];
  /** Default: toolgate's tracer on the global provider (records nothing until an SDK is registered). */
  readonly tracer?: Tracer;
}

/** The executor's metrics and traces, ready to be put into its pipeline and deps. */
export interface ExecutorTelemetry {
  readonly metrics: ToolgateMetrics;
  /** Stage latencies, attempts and retries: the pipeline's `observer`. */
  readonly pipelineObserver: PipelineObserver;
  /**
   * Answers the executor gives without the pipeline, dead letters and principal refusals
   * (`toolgate_principal_refusals_total{reason}`): `ExecutorDeps.observer`.
   */
  readonly observer: ExecutorObserver;
  /**
   * The pipeline as the executor's `CallRunner`: in-flight gauge, result metrics (outcome, latency,
   * token equivalents) and the call span around each run, whose context the outputs carry.
   */
  instrument(pipeline: PipelineRunner): CallRunner;
}

/** The name of the counter of refused principals, labelled by `reason`. */
export const PRINCIPAL_REFUSALS_METRIC = 'toolgate_principal_refusals_total';

/**
 * Registers `toolgate_principal_refusals_total{reason}` in `registry` and returns its increment.
 * The label takes only values of `PRINCIPAL_REFUSAL_REASONS` (anything else counts as `other`),
 * and every one of them is exported from the start at 0, so `rate()` and alerts see a series
 * before the first refusal. Throws if the registry already holds the metric.
 */
export function principalRefusalCounter(registry: Registry): (reason: PrincipalRefusalReason) => void {
  const counter = new Counter({
    name: PRINCIPAL_REFUSALS_METRIC,
    help: 'Calls refused because their principal assertion failed verification or named another tenant, by reason.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of PRINCIPAL_REFUSAL_REASONS) counter.labels(reason).inc(0);
  return (reason) => counter.labels(principalRefusalReason(reason)).inc();
}

/**
 * Creates the executor's metrics in `options.registry` and its call tracing, so every call is
 * counted once — by the instrumented pipeline, or by the observer when the executor answers
 * without it — with labels from closed sets only. Throws if the registry already holds
 * toolgate's metrics (prom-client refuses duplicate names).
 */
export function createExecutorTelemetry(options: ExecutorTelemetryOptions): ExecutorTelemetry {
  const metrics = createToolgateMetrics(options.registry, {
    isKnownTool: knownToolsOf(options.tools, options.clock),
    ...(options.breakerStates === undefined ? {} : { breakerStates: options.breakerStates }),
    ...(options.consumerLag === undefined ? {} : { consumerLag: options.consumerLag }),
    ...(options.outboundDownstreams === undefined
      ? {}
      : { outboundDownstreams: options.outboundDownstreams }),
  });
  const tracing = createCallTracing(options.tracer ?? toolgateTracer());
  const countRefusal = principalRefusalCounter(options.registry);
  return {
    metrics,
    pipelineObserver: pipelineObserver(metrics),
    observer: { ...metricsObserver(metrics), principalRefused: countRefusal },
    instrument: (pipeline) => instrumentPipeline(pipeline, { metrics, tracing, clock: options.clock }),
  };
}
