import { classify } from '../core/classify.js';
import { ERROR_CODES, ToolgateError } from '../core/errors.js';
import type { ErrorCode } from '../core/errors.js';
import { argumentsFingerprint, idempotencyKey } from '../core/idempotency-key.js';
import { attemptScope } from '../execution/attempt-scope.js';
import { maxAttempts, worstCaseBackoffMs } from '../execution/retry-policy.js';
import type { CallState } from '../pipeline/call-state.js';
import type { PipelineDeps, PipelineSettings } from '../pipeline/deps.js';
import type { GuardStage, Layer, StageResult, Verdict } from '../pipeline/stage.js';
import type { ClaimResult, StoredResult } from '../ports/idempotency-store.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import {
  effectMayHaveHappened,
  holdsClaim,
  isReadOnlyTool,
  resourceKeyOf,
  settleClaim,
} from './claim-record.js';
import { leaseRunOut } from './run-attempt.js';
import { settleBudgetMs } from './safe-path.js';
import { recordFacts } from './record-facts.js';

/**
 * The idempotency layer: at most one execution per logical call — within the retention: a completed record lives
 * `settings.resultTtlMs` (7 days in the services, 24 hours embedded), and a call repeated after it
 * expired is claimed afresh and runs again.
 *
 * - The key is the one the call arrived with, which must equal the key recomputed from the verified
 *   context and the raw arguments (a publisher cannot pick a key that collides with another call's:
 *   a mismatch is refused MALFORMED_EVENT); absent, it is computed here.
 * - Read-only tools pass without a claim (reason "read-only").
 * - Otherwise the key is claimed atomically with a lease covering the tool's worst-case run time:
 *   `claimed` continues; `completed` finishes with the stored answer (DUPLICATE, or UNRESOLVED again
 *   — never re-run); `in-flight` waits for the other owner (polling with backoff, bounded by the
 *   lease, the call's signal and deadline) and then answers the same way; `taken-over` continues
 *   with `state.takenOver` set, so the execute stage takes the tool's safe path; `conflict` is refused
 *   IDEMPOTENCY_CONFLICT.
 * - With `deps.tombstones`, the first claim is sent together with marking the key's tombstone (which
 *   outlives the record, and is cleared when a claim is released): `claimed` for a key that was
 *   marked before means its record expired — the call still runs, and that is reported
 *   (`observer.onClaimAfterExpiry`, and the decision's reason in the audit record).
 * - An unreachable store is refused DEPENDENCY_UNAVAILABLE: a state-changing call never runs without
 *   a claim.
 * Wrapping execution and output validation, it settles the claim in one place after they end,
 * whatever they did (`settleClaim`): a layer that throws inside still leaves the claim settled.
 */
export const idempotencyLayer: Layer = {
  name: 'idempotency',
  async wrap(state, deps, next) {
    const claimed = await claimStage(state, deps);
    if (claimed.kind !== 'continue') return claimed;
    const verdict = await next(claimed.reason);
    await recordFacts(state, deps, verdict);
    const settled = await settleClaim(state, deps, verdict);
    return settled ? verdict : lostClaimVerdict(state, deps, verdict);
  },
};

/**
 * The answer when the claim could not be settled: the verdict stands, unless it says the effect
 * did not happen and this executor's lease ran out first. Then another executor may own the call by
 * now and apply it — a "failed" from this one could turn false after it was sent — so the call is
 * answered UNRESOLVED and reconciled like any unknown outcome.
 */
function lostClaimVerdict(state: CallState, deps: PipelineDeps, verdict: Verdict): Verdict {
  if (!holdsClaim(state) || verdict.kind === 'done' || !leaseRunOut(state, deps)) return verdict;
  if (effectMayHaveHappened(state, verdict)) return verdict;
  return {
    kind: 'finish',
    outcome: 'UNRESOLVED',
    error: new ToolgateError(
      'UNRESOLVED',
      'The outcome of this action is unknown; it will be reconciled. Do not repeat it; tell the user it is being checked.',
      { retryable: false },
    ),
    reason: `this executor's lease ran out before it could record that the call did not run (${verdict.error?.code ?? 'INTERNAL'}); another executor may own it now`,
  };
}

/**
 * The layer's decision before the inner layers: the key checked and claimed, as described above.
 * On `continue` the caller holds a claim it must settle (`settleClaim`); the layer does.
 */
export const claimStage: GuardStage = async (state, deps) => {
  const tool = state.tool;
  if (tool === undefined) {
    return refuse('INTERNAL', 'The idempotency check ran before the tool was resolved.');
  }
  let key: string;
  let fingerprint: string;
  try {
    const expected = idempotencyKey(state.ctx, state.call.name, state.call.arguments);
    if (state.providedKey !== undefined && state.providedKey !== expected) {
      return refuse(
        'MALFORMED_EVENT',
        'The idempotency key does not belong to this call (task, step, position, tool and arguments).',
      );
    }
    key = state.providedKey ?? expected;
    fingerprint = argumentsFingerprint(state.call.arguments);
  } catch (err) {
    return { kind: 'refuse', error: classify(err) };
  }
  state.idempotencyKey = key;
  state.resourceKey = resourceKeyOf(tool, state);
  if (isReadOnlyTool(tool)) return { kind: 'continue', reason: 'read-only' };

  const leaseMs = claimLeaseMs(tool, deps.settings);
  let askedAtMs = deps.clock.now();
  const claim = (): Promise<ClaimResult> => {
    askedAtMs = deps.clock.now();
    return deps.idempotency.claim(key, fingerprint, deps.owner, leaseMs);
  };
  let answer: ClaimResult;
  let claimedBefore: boolean;
  try {
    [answer, claimedBefore] = await Promise.all([claim(), markTombstone(deps, key)]);
  } catch (err) {
    return storeDown(err);
  }
  if (answer.kind === 'in-flight') {
    const waited = await waitForOwner(state, deps, answer, claim);
    if (waited.kind === 'stopped') {
      return {
        kind: 'finish',
        outcome: 'UNRESOLVED',
        error: new ToolgateError(
          'UNRESOLVED',
          'An identical call is still running; its outcome is not known yet. Do not repeat it.',
        ),
        reason: 'an identical call is still running elsewhere; stopped waiting for it',
      };
    }
    if (waited.kind === 'store-down') return storeDown(waited.error);
    answer = waited.answer;
  }
  if (answer.kind === 'claimed' || answer.kind === 'taken-over') state.leaseExpiresAtMs = askedAtMs + leaseMs;
  switch (answer.kind) {
    case 'claimed':
      if (!claimedBefore) return { kind: 'continue' };
      try {
        deps.observer?.onClaimAfterExpiry?.(tool.name);
      } catch {
        // Observation never changes a decision.
      }
      return {
        kind: 'continue',
        reason:
          'an identical call was claimed before, but its idempotency record expired (older than the ' +
          'retention): running it again',
      };
    case 'taken-over':
      state.takenOver = true;
      return {
        kind: 'continue',
        reason: "a previous executor stopped mid-call; taking the tool's safe path",
      };
    case 'completed':
      return replay(answer.stored);
    case 'conflict':
      return refuse(
        'IDEMPOTENCY_CONFLICT',
        'The same idempotency key was already used with different arguments.',
      );
  }
};

/**
 * The lease a claim takes: every attempt at its full timeout, the longest backoff between them, and
 * a margin — for a status-check tool also the checks around them (one settling before the first
 * send and one after each, see `settleBudgetMs`). A lease shorter than the real run time would let a
 * duplicate take over a call that is still running.
 */
export function claimLeaseMs(tool: ToolDefinition, settings: PipelineSettings): number {
  const attempts = maxAttempts(tool.retry);
  const checks = tool.retrySafety.kind === 'status-check' ? (attempts + 1) * settleBudgetMs(tool) : 0;
  return Math.ceil(
    tool.timeoutMs * attempts + checks + worstCaseBackoffMs(tool.retry) + settings.leaseMarginMs,
  );
}

/** The first wait while another owner runs the call, and the longest; doubles in between. */
const POLL_FIRST_MS = 10;
const POLL_MAX_MS = 250;

type Waited =
  | { readonly kind: 'answer'; readonly answer: Exclude<ClaimResult, { kind: 'in-flight' }> }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'store-down'; readonly error: unknown };

/**
 * Polls the store until the other owner completes or releases the key, or its lease runs out (the
 * store then answers `taken-over` and this call owns the key). Each sleep ends no later than just
 * after the current lease, so a dead owner is noticed promptly.
 */
async function waitForOwner(
  state: CallState,
  deps: PipelineDeps,
  first: Extract<ClaimResult, { kind: 'in-flight' }>,
  claim: () => Promise<ClaimResult>,
): Promise<Waited> {
  const scope = attemptScope(state.signal, Infinity, state.ctx.deadlineMs, deps.clock);
  try {
    let current = first;
    let delay = POLL_FIRST_MS;
    for (;;) {
      const untilLease = current.leaseExpiresAtMs - deps.clock.now() + 1;
      try {
        await deps.clock.sleep(Math.max(1, Math.min(delay, untilLease)), scope.signal);
      } catch {
        return { kind: 'stopped' };
      }
      delay = Math.min(POLL_MAX_MS, delay * 2);
      let next: ClaimResult;
      try {
        next = await claim();
      } catch (error) {
        return { kind: 'store-down', error };
      }
      if (next.kind !== 'in-flight') return { kind: 'answer', answer: next };
      current = next;
    }
  } finally {
    scope.dispose();
  }
}

/** The default life of a key's tombstone: well beyond the services' 7-day retention. */
export const DEFAULT_TOMBSTONE_TTL_MS = 30 * 24 * 3_600_000;

/**
 * Marks `key`'s tombstone; resolves whether it was marked before. False without tombstones or when
 * they fail: only visibility is lost.
 */
async function markTombstone(deps: PipelineDeps, key: string): Promise<boolean> {
  if (deps.tombstones === undefined) return false;
  try {
    return await deps.tombstones.mark(key, deps.settings.tombstoneTtlMs ?? DEFAULT_TOMBSTONE_TTL_MS);
  } catch {
    return false;
  }
}

/** Answers a duplicate from the stored record, without running the tool. */
function replay(stored: StoredResult): StageResult {
  if (stored.outcome === 'SUCCESS' || stored.outcome === 'DUPLICATE') {
    return {
      kind: 'finish',
      outcome: 'DUPLICATE',
      payload: stored.result,
      reason: 'duplicate of an earlier call; returning its result',
    };
  }
  if (stored.outcome === 'UNRESOLVED') {
    return {
      kind: 'finish',
      outcome: 'UNRESOLVED',
      error: new ToolgateError(
        'UNRESOLVED',
        'An earlier identical call has an unknown outcome and is being reconciled. Do not repeat it.',
      ),
      reason: 'duplicate of an earlier call whose outcome is unknown; not run again',
    };
  }
  // The effect happened but its answer was refused (e.g. BAD_OUTPUT): repeat that refusal.
  const error = storedError(stored.result);
  return {
    kind: 'finish',
    outcome: error.outcome,
    error,
    reason: 'duplicate of an earlier call whose result was refused; not run again',
  };
}

function storedError(result: unknown): ToolgateError {
  const code = (result as { code?: unknown } | null)?.code;
  const message = (result as { message?: unknown } | null)?.message;
  const known = typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code);
  return new ToolgateError(
    known ? (code as ErrorCode) : 'INTERNAL',
    typeof message === 'string'
      ? message
      : 'An earlier identical call failed after it ran; it is not run again.',
    { retryable: false },
  );
}

function storeDown(err: unknown): StageResult {
  return {
    kind: 'refuse',
    error: new ToolgateError(
      'DEPENDENCY_UNAVAILABLE',
      'The idempotency store is unavailable, so this action was not run. Try again shortly.',
      { retryable: true, cause: err },
    ),
  };
}

function refuse(code: ErrorCode, message: string): StageResult {
  return { kind: 'refuse', error: new ToolgateError(code, message) };
}
