/** The guard stages, one per file, and the one ordered array of them. */
export { STAGES } from './stages.js';
export { resolveStage } from './resolve.js';
export { validateInputStage } from './validate-input.js';
export { authorizeStage, hasScopes, NOT_AUTHORIZED_MESSAGE } from './authorize.js';
export { rateLimitStage, rateLimitBuckets, type RateLimitBucket } from './rate-limit.js';
export { businessRulesStage } from './business-rules.js';
export { idempotencyLayer, claimStage } from './idempotency.js';
export { executeStage, createExecuteStage, type ExecuteStageOptions } from './execute.js';
export { validateOutputStage } from './validate-output.js';
export { formatZodIssues, zodIssueLines, formatPath, DEFAULT_MAX_ISSUES } from './format-zod-issues.js';
