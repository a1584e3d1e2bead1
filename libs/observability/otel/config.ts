import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/**
 * The OpenTelemetry environment variables trace export reads (see ../otel-export.ts): parsed once,
 * here, so a bad value names its variable at start-up.
 */

/** Every environment variable trace export reads (here, or in the OTLP exporter). */
export const TRACE_EXPORT_ENV = [
  'OTEL_SDK_DISABLED',
  'OTEL_TRACES_EXPORTER',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_TIMEOUT',
  'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
  'OTEL_EXPORTER_OTLP_COMPRESSION',
  'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION',
  'OTEL_EXPORTER_OTLP_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_CLIENT_KEY',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_BSP_EXPORT_TIMEOUT',
  'OTEL_BSP_MAX_QUEUE_SIZE',
  'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
] as const;

/** An OpenTelemetry environment variable has a value this process cannot honour. */
export class TraceExportConfigError extends Error {
  override readonly name = 'TraceExportConfigError';
}

/** The OTLP/HTTP body encodings the process can send. */
export type OtlpHttpProtocol = 'http/protobuf' | 'http/json';

/** What the environment asks for, once parsed; `null` from {@link readTraceExportSettings} means off. */
export interface TraceExportSettings {
  /** Where spans are POSTed: the per-signal endpoint as given, or the base endpoint + `/v1/traces`. */
  readonly url: string;
  readonly protocol: OtlpHttpProtocol;
  /** `OTEL_SERVICE_NAME`, else `service.name` from `OTEL_RESOURCE_ATTRIBUTES`, else the caller's default. */
  readonly serviceName: string;
  /** Resource attributes from `OTEL_RESOURCE_ATTRIBUTES` (percent-decoded). */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  /** `OTEL_TRACES_SAMPLER` (default `parentbased_always_on`: the caller's sampled flag is kept). */
  readonly sampler: SamplerName;
  /** `OTEL_TRACES_SAMPLER_ARG` for the ratio samplers, in [0, 1] (default 1). */
  readonly samplerRatio: number;
  /** `OTEL_BSP_*`: the batch span processor's limits. */
  readonly batch: BatchSettings;
}

/** The sampler names of the OpenTelemetry environment specification this process supports. */
export type SamplerName =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

const SAMPLERS: readonly SamplerName[] = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

/** Batch span processor limits (`OTEL_BSP_*`); the SDK's defaults when unset. */
export interface BatchSettings {
  readonly scheduledDelayMillis: number;
  readonly exportTimeoutMillis: number;
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
}

/** `service.name` when nothing else names one. */
export const DEFAULT_SERVICE_NAME = 'toolgate';
const DEFAULT_TRACES_URL = 'http://localhost:4318/v1/traces';
const DEFAULT_BATCH: BatchSettings = {
  scheduledDelayMillis: 5_000,
  exportTimeoutMillis: 30_000,
  maxQueueSize: 2_048,
  maxExportBatchSize: 512,
};

/**
 * Parses the OpenTelemetry variables in `env`. Returns `null` when export is off (see the module
 * comment). Throws {@link TraceExportConfigError}, naming the variable, for an exporter other than
 * `otlp`/`none`, a protocol other than `http/protobuf`/`http/json` (gRPC is not bundled), an
 * endpoint that is not an absolute URL, an unknown sampler or a malformed number.
 */
export function readTraceExportSettings(
  env: NodeJS.ProcessEnv = process.env,
  defaultServiceName: string = DEFAULT_SERVICE_NAME,
): TraceExportSettings | null {
  if (flag(env.OTEL_SDK_DISABLED)) return null;
  const exporters = list(env.OTEL_TRACES_EXPORTER);
  if (exporters.includes('none')) return null;
  const unsupported = exporters.filter((e) => e !== 'otlp');
  if (unsupported.length > 0) {
    throw new TraceExportConfigError(
      `OTEL_TRACES_EXPORTER: only "otlp" or "none" are supported, not "${unsupported.join(',')}"`,
    );
  }
  const signalEndpoint = text(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const baseEndpoint = text(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (exporters.length === 0 && signalEndpoint === undefined && baseEndpoint === undefined) return null;

  const resourceAttributes = parseResourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES);
  const sampler = samplerName(env.OTEL_TRACES_SAMPLER);
  return {
    url: tracesUrl(signalEndpoint, baseEndpoint),
    protocol: protocolOf(env),
    serviceName: text(env.OTEL_SERVICE_NAME) ?? resourceAttributes[ATTR_SERVICE_NAME] ?? defaultServiceName,
    resourceAttributes,
    sampler,
    samplerRatio: samplerRatio(sampler, env.OTEL_TRACES_SAMPLER_ARG),
    batch: {
      scheduledDelayMillis: count(env, 'OTEL_BSP_SCHEDULE_DELAY', DEFAULT_BATCH.scheduledDelayMillis),
      exportTimeoutMillis: count(env, 'OTEL_BSP_EXPORT_TIMEOUT', DEFAULT_BATCH.exportTimeoutMillis),
      maxQueueSize: count(env, 'OTEL_BSP_MAX_QUEUE_SIZE', DEFAULT_BATCH.maxQueueSize),
      maxExportBatchSize: count(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', DEFAULT_BATCH.maxExportBatchSize),
    },
  };
}

function tracesUrl(signalEndpoint: string | undefined, baseEndpoint: string | undefined): string {
  if (signalEndpoint !== undefined) return absoluteUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', signalEndpoint);
  if (baseEndpoint === undefined) return DEFAULT_TRACES_URL;
  const base = absoluteUrl('OTEL_EXPORTER_OTLP_ENDPOINT', baseEndpoint);
  return `${base.endsWith('/') ? base : `${base}/`}v1/traces`;
}

function absoluteUrl(variable: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TraceExportConfigError(`${variable}: not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TraceExportConfigError(`${variable}: must be an http or https URL`);
  }
  return url.href;
}

function protocolOf(env: NodeJS.ProcessEnv): OtlpHttpProtocol {
  const variable =
    text(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) !== undefined
      ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
      : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const value = text(env[variable]) ?? 'http/protobuf';
  if (value === 'http/protobuf' || value === 'http/json') return value;
  throw new TraceExportConfigError(`${variable}: only "http/protobuf" or "http/json" are supported`);
}

function samplerName(value: string | undefined): SamplerName {
  const name = text(value)?.toLowerCase() ?? 'parentbased_always_on';
  const known = SAMPLERS.find((s) => s === name);
  if (known === undefined) {
    throw new TraceExportConfigError(`OTEL_TRACES_SAMPLER: one of ${SAMPLERS.join(', ')}`);
  }
  return known;
}

function samplerRatio(sampler: SamplerName, value: string | undefined): number {
  const raw = text(value);
  if (raw === undefined || !sampler.endsWith('traceidratio')) return 1;
  const ratio = Number(raw);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw new TraceExportConfigError('OTEL_TRACES_SAMPLER_ARG: a number from 0 to 1');
  }
  return ratio;
}

function count(env: NodeJS.ProcessEnv, variable: string, fallback: number): number {
  const raw = text(env[variable]);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new TraceExportConfigError(`${variable}: a positive integer`);
  return n;
}

/** `key1=value1,key2=value2`, values percent-encoded (OpenTelemetry resource SDK specification). */
function parseResourceAttributes(value: string | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of list(value, false)) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw new TraceExportConfigError('OTEL_RESOURCE_ATTRIBUTES: key=value pairs separated by commas');
    try {
      attributes[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(
        pair.slice(eq + 1).trim(),
      );
    } catch {
      throw new TraceExportConfigError('OTEL_RESOURCE_ATTRIBUTES: a value is not valid percent-encoding');
    }
  }
  return attributes;
}

function text(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function list(value: string | undefined, lowerCase = true): string[] {
  return (text(value) ?? '')
    .split(',')
    .map((item) => (lowerCase ? item.trim().toLowerCase() : item.trim()))
    .filter((item) => item !== '');
}

function flag(value: string | undefined): boolean {
  return text(value)?.toLowerCase() === 'true';
}
