/** The guard pipeline: one entry point, its stage contract, call state, dependencies and audit record. */
export { GuardPipeline, type PipelineRun, type RunOptions } from './guard-pipeline.js';
export { buildAuditRecord, redactArguments, REDACTED, type AuditInput } from './build-audit-record.js';
export { toResultError } from '../core/result-error.js';
export { CONTINUE, type GuardStage, type Stage, type StageResult } from './stage.js';
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
export type { AuditRecord, AttemptRecord, StageDecision, StageName } from './audit-record.js';
