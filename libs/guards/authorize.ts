import { classify } from '../core/classify.js';
import { ToolgateError } from '../core/errors.js';
import type { Principal } from '../core/types.js';
import { requireArgs, requireTool } from '../pipeline/stage-preconditions.js';
import { CONTINUE } from '../pipeline/stage.js';
import type { GuardStage, StageResult } from '../pipeline/stage.js';

/** The one message every authorization refusal carries, whichever check failed (no probing oracle). */
export const NOT_AUTHORIZED_MESSAGE = 'Not authorized to perform this action.';

/**
 * Whether `granted` covers every scope in `required`, by exact match only. There are no wildcards
 * (no `*`, no `refunds:*`): the registry offers a tool only to principals holding its exact scopes,
 * and authorization must not grant what the model was never offered. An empty `required` is always
 * covered.
 */
export function hasScopes(granted: readonly string[], required: readonly string[]): boolean {
  const held = new Set(granted);
  return required.every((scope) => held.has(scope));
}

/**
 * Stage 2: is this verified principal allowed to make this call?
 *
 * Every fact comes from `ctx.principal`, which the auth layer built from a verified assertion; the
 * call's arguments are passed to the tool's resource rule only as the thing being acted on, never
 * as evidence of who is acting or what was approved. In order:
 * 1. the principal must be well formed and belong to `ctx.tenant`;
 * 2. it must hold every scope the tool requires ({@link hasScopes});
 * 3. the tool's resource rule (`tool.authorize`), if any, must return exactly `true`.
 *
 * Any failure refuses with UNAUTHORIZED, not retryable, always with {@link NOT_AUTHORIZED_MESSAGE}
 * and no suggested fix, so the answer never says which check failed or how to pass it. A resource
 * rule that throws fails closed: if its error classifies as an outage (timeout, server error, open
 * breaker, rate limit) the refusal is DEPENDENCY_UNAVAILABLE (retryable, generic message);
 * otherwise it is UNAUTHORIZED. The rule's own error text never reaches the model, because a
 * "not found" from an ownership lookup would tell a prober which ids exist. No side effects.
 */
export const authorizeStage: GuardStage = async (state) => {
  const tool = requireTool(state, 'authorize');
  const { ctx } = state;
  const principal: unknown = ctx.principal;
  if (!isWellFormedPrincipal(principal)) return refuse('principal is missing or malformed');
  if (principal.tenant !== ctx.tenant) return refuse('principal belongs to another tenant');
  if (!hasScopes(principal.scopes, tool.scopes)) return refuse('principal lacks a required scope');
  if (tool.authorize === undefined) return CONTINUE;
  const args = requireArgs(state, 'authorize');
  let allowed: boolean;
  try {
    allowed = (await tool.authorize(principal, args, ctx)) === true;
  } catch (err) {
    return ruleFailed(err);
  }
  return allowed ? CONTINUE : refuse('resource rule denied the call');
};

const OUTAGE_CODES = new Set([
  'TIMEOUT',
  'SERVER_ERROR',
  'BREAKER_OPEN',
  'RATE_LIMITED',
  'DEPENDENCY_UNAVAILABLE',
]);

function ruleFailed(err: unknown): StageResult {
  const classified = classify(err);
  if (!OUTAGE_CODES.has(classified.code)) return refuse('resource rule threw', err);
  return {
    kind: 'refuse',
    error: new ToolgateError('DEPENDENCY_UNAVAILABLE', 'Authorization could not be checked right now.', {
      retryable: true,
      cause: err,
    }),
  };
}

/** `detail` goes only into `cause` (logs); the model sees the one generic message. */
function refuse(detail: string, cause?: unknown): StageResult {
  return {
    kind: 'refuse',
    error: new ToolgateError('UNAUTHORIZED', NOT_AUTHORIZED_MESSAGE, {
      retryable: false,
      cause: new Error(detail, cause === undefined ? undefined : { cause }),
    }),
  };
}

function isWellFormedPrincipal(value: unknown): value is Principal {
  if (value === null || typeof value !== 'object') return false;
  const p = value as Record<string, unknown>;
  return (
    typeof p.id === 'string' &&
    p.id.length > 0 &&
    typeof p.tenant === 'string' &&
    p.tenant.length > 0 &&
    isStringArray(p.scopes) &&
    isStringArray(p.roles)
  );
}

function isStringArray(value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}
