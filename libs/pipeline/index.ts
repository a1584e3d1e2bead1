/** The guard pipeline: one entry point, its stage contract, call state, dependencies and audit record. */
export { GuardPipeline, type AroundLayer, type PipelineRun, type RunOptions } from './guard-pipeline.js';
export { buildAuditRecord, redactArguments, REDACTED, type AuditInput } from './build-audit-record.js';
export { toResultError } from '../core/result-error.js';
export {
  CONTINUE,
  type GuardStage,
  type Layer,
  type Next,
  type PipelineStep,
  type Stage,
  type StageResult,
  type Verdict,
} from './stage.js';
export { syncStage } from './sync-stage.js';
export { requireTool, requireArgs } from './stage-preconditions.js';
export type { CallState } from './call-state.js';
export type {
  PipelineDeps,
  ToolResolver,
  PolicyDecision,
  PolicyEngine,
  CircuitBreakers,
  OutboundLimiter,
  PipelineObserver,
  PipelineSettings,
} from './deps.js';
export type { AuditRecord, AttemptRecord, StageDecision, StageName } from '../core/audit-record.js';
