import {
  startTraceExport,
  TraceExportConfigError,
  type TraceExport,
} from '../../libs/observability/otel-export.js';
import { ServiceConfigError } from './service-env.js';
import type { Service } from './service-runtime.js';

/** What {@link runServiceProcess} takes besides the configuration loader and the factory. */
export interface ServiceProcessOptions {
  /** `service.name` of exported spans unless OTEL_SERVICE_NAME says otherwise. Default: "toolgate". */
  readonly serviceName?: string;
}

/**
 * Runs a service as the process's main: `load()` parses the configuration (a bad one is printed to
 * stderr — it names variables, never values — and the exit code is 1); SIGTERM or SIGINT stops the
 * service gracefully and the process exits 0 once everything is closed; a failed start (already
 * logged, and cleaned up, by the service) sets exit code 1. Resolves once the service started, or
 * failed to.
 *
 * Trace export (libs/observability/otel-export.ts) is registered after the configuration parsed and
 * before the service is created, when the OpenTelemetry variables ask for it
 * (OTEL_EXPORTER_OTLP_ENDPOINT); without them nothing is registered. Queued spans are exported
 * after the service stopped (its last spans included) and before the process exits; a bad
 * OpenTelemetry variable is a configuration error like any other.
 */
export async function runServiceProcess<C>(
  load: () => C,
  create: (config: C) => Service,
  options: ServiceProcessOptions = {},
): Promise<void> {
  let config: C;
  let traces: TraceExport | null;
  try {
    config = load();
    traces = startTraceExport({ defaultServiceName: options.serviceName ?? 'toolgate' });
  } catch (err) {
    const named = err instanceof ServiceConfigError || err instanceof TraceExportConfigError;
    process.stderr.write(`${named ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const flushTraces = async (): Promise<void> => {
    await traces?.shutdown();
  };
  const service = create(config);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => void service.stop(signal).finally(flushTraces));
  }
  try {
    await service.start();
  } catch {
    process.exitCode = 1;
    await flushTraces();
  }
}
