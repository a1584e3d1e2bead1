/** Metrics, logs, traces and the health/metrics endpoint that services wire in. */
export {
  createToolgateMetrics,
  TOOL_LATENCY_BUCKETS_SECONDS,
  STAGE_LATENCY_BUCKETS_SECONDS,
  TASK_TOOL_CALL_BUCKETS,
  TOKEN_BUCKETS,
  type ToolgateMetrics,
  type ToolgateMetricsOptions,
  type ObservedCall,
  type TaskStatus,
} from './metrics.js';
export { registerSourceGauges, type MetricSources, type CaseCountReader } from './source-gauges.js';
export {
  toolLabel,
  outcomeLabel,
  stageLabel,
  decisionLabel,
  attemptResultLabel,
  deadLetterReasonLabel,
  UNKNOWN_LABEL,
  OTHER_LABEL,
  CASE_STATES,
  BREAKER_STATE_VALUE,
  type KnownToolPredicate,
} from './metric-labels.js';
export {
  pipelineObserver,
  recordResult,
  knownToolsOf,
  type RecordResultOptions,
  type ToolNameSource,
} from './pipeline-metrics.js';
export {
  instrumentPipeline,
  type InstrumentOptions,
  type InstrumentedRunner,
} from './instrumented-runner.js';
export { postgresCaseCounts, UNFINISHED_CASE_STATES } from './postgres-case-counts.js';
export {
  createLogger,
  withLogContext,
  redactArgumentsForLog,
  type LoggerOptions,
  type LogContext,
} from './logger.js';
export {
  scrubSecrets,
  scrubText,
  isSecretKey,
  secretRedactPaths,
  SECRET_FIELD_NAMES,
} from './secret-scrub.js';
export { busLogger } from './bus-logger.js';
export {
  parseTraceparent,
  formatTraceparent,
  traceHeaders,
  readTraceContext,
  childSpanId,
  newTraceId,
  randomHex,
  isValidTraceId,
  isValidSpanId,
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
  SAMPLED_FLAG,
  type TraceContext,
  type HexSource,
} from './trace-context.js';
export {
  createCallTracing,
  toolgateTracer,
  parentContext,
  TOOLGATE_TRACER_NAME,
  type CallTracing,
  type PipelineRunner,
  type TracedRun,
} from './tracing.js';
export {
  startHealthServer,
  type HealthServer,
  type HealthServerOptions,
  type Readiness,
} from './health-server.js';
export { readinessChecks, type ReadinessCheck } from './readiness.js';
export {
  kafkaConsumerLag,
  kafkaLagSource,
  type KafkaLagSource,
  type KafkaLagSourceOptions,
  type ConsumerLagReader,
  type PartitionLag,
  type KafkaConsumerLagOptions,
} from './consumer-lag.js';
