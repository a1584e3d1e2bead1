import type { PipelineStep } from '../pipeline/stage.js';
import { authorizeStage } from './authorize.js';
import { businessRulesStage } from './business-rules.js';
import { executeStage } from './execute.js';
import { idempotencyLayer } from './idempotency.js';
import { parseArgumentsStage } from './parse-arguments.js';
import { verifyPrincipalStage } from './verify-principal.js';
import { rateLimitStage } from './rate-limit.js';
import { resolveStage } from './resolve.js';
import { validateInputStage } from './validate-input.js';
import { validateOutputStage } from './validate-output.js';

/**
 * The guard pipeline, outermost first: the one place the order is written.
 *
 * The ingress stages lead: a call from outside is first tied to a verified principal, then its
 * arguments are parsed, and only then does any stage look at the tool it names (an unverified
 * caller learns nothing about the registry, not even whether a tool exists). A run whose caller
 * vouches for its principal (`RunOptions.signed` absent) starts after them.
 *
 * Stages 0–4 have no side effects, so a call refused there never reaches the tool. Rate limiting
 * comes after authorization so an unauthorized caller cannot spend anyone's budget, and business
 * rules come after rate limiting so a flood of out-of-policy calls is still throttled. The
 * idempotency claim comes last before execution because it is the first step that writes state;
 * it is a layer around execution and output validation, so it settles the claim after them,
 * whatever they did.
 */
export const STAGES: readonly PipelineStep[] = Object.freeze([
  { name: 'verify-principal', run: verifyPrincipalStage },
  { name: 'parse-arguments', run: parseArgumentsStage },
  { name: 'resolve', run: resolveStage },
  { name: 'validate-input', run: validateInputStage },
  { name: 'authorize', run: authorizeStage },
  { name: 'rate-limit', run: rateLimitStage },
  { name: 'business-rules', run: businessRulesStage },
  idempotencyLayer,
  { name: 'execute', run: executeStage },
  { name: 'validate-output', run: validateOutputStage },
] as const satisfies readonly PipelineStep[]);
