import { context, propagation, trace, type TextMapPropagator } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { readTraceExportSettings, TraceExportConfigError, type TraceExportSettings } from './otel/config.js';

export { readTraceExportSettings, TraceExportConfigError, type TraceExportSettings } from './otel/config.js';

/**
 * Trace export over OTLP/HTTP, configured by the standard OpenTelemetry environment variables.
 *
 * toolgate's code only uses `@opentelemetry/api` (see tracing.ts): without a registered SDK every
 * span is a no-op. {@link startTraceExport} registers one — a tracer provider with a batch span
 * processor and an OTLP/HTTP exporter, an AsyncLocalStorage context manager and the W3C trace-context
 * propagator — when the environment asks for export, and nothing at all otherwise.
 *
 * Export is on when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, or
 * `OTEL_TRACES_EXPORTER=otlp` (then to the default http://localhost:4318/v1/traces). It is off when
 * none of these is set, when `OTEL_TRACES_EXPORTER=none`, or when `OTEL_SDK_DISABLED=true`.
 */

/** A registered trace export. */
export interface TraceExport {
  readonly settings: TraceExportSettings;
  /** Exports every ended span now. */
  forceFlush(): Promise<void>;
  /**
   * Exports what is queued, shuts the exporter down and unregisters the global provider, context
   * manager and propagator. Idempotent; never rejects (a failed export is reported on stderr).
   */
  shutdown(): Promise<void>;
}

/** What {@link startTraceExport} takes besides the environment. */
export interface TraceExportOptions {
  /**
   * Default: the process environment. Headers, timeout, compression and TLS files are read from the
   * process environment by the OTLP exporter itself.
   */
  readonly env?: NodeJS.ProcessEnv;
  /** `service.name` when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` names one. */
  readonly defaultServiceName?: string;
}

/**
 * Registers the global tracer provider, context manager and propagator for the settings
 * {@link readTraceExportSettings} reads from `options.env`, and returns the handle to flush and shut
 * it down. Returns `null`, registering nothing, when export is off. Call it once, before the
 * service starts; throws {@link TraceExportConfigError} for a bad variable, and if another provider
 * is already registered globally (a second registration would be silently ignored by the API).
 */
export function startTraceExport(options: TraceExportOptions = {}): TraceExport | null {
  const settings = readTraceExportSettings(options.env, options.defaultServiceName);
  if (settings === null) return null;
  const provider = new TracerProvider({
    resource: resourceOf(settings),
    sampler: samplerOf(settings),
    spanProcessors: [new BatchSpanProcessor({ exporter: exporterOf(settings), ...settings.batch })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  const propagator: TextMapPropagator = new W3CTraceContextPropagator();
  if (!trace.setGlobalTracerProvider(provider)) {
    contextManager.disable();
    throw new TraceExportConfigError('a global OpenTelemetry tracer provider is already registered');
  }
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(propagator);
  let shutdown: Promise<void> | undefined;
  return {
    settings,
    forceFlush: () => provider.forceFlush(),
    shutdown() {
      shutdown ??= provider
        .shutdown()
        .catch((err: unknown) => {
          process.stderr.write(`trace export: shutdown failed: ${String(err)}\n`);
        })
        .finally(() => {
          trace.disable();
          context.disable();
          propagation.disable();
        });
      return shutdown;
    },
  };
}

function exporterOf(settings: TraceExportSettings): SpanExporter {
  return settings.protocol === 'http/json'
    ? new OtlpJsonTraceExporter({ url: settings.url })
    : new OtlpProtobufTraceExporter({ url: settings.url });
}

function resourceOf(settings: TraceExportSettings): Resource {
  return defaultResource().merge(
    resourceFromAttributes({ ...settings.resourceAttributes, [ATTR_SERVICE_NAME]: settings.serviceName }),
  );
}

function samplerOf(settings: TraceExportSettings): Sampler {
  const ratio = (): Sampler => new TraceIdRatioBasedSampler(settings.samplerRatio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
  }
}
