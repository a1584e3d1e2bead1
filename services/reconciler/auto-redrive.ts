import type { ReconciliationCase } from '../../libs/ports/case-store.js';
import { ranToolVersion, type CaseRequest } from '../../libs/reconcile/case-request.js';
import { fullArguments, type FullArguments } from '../../libs/reconcile/original-call.js';
import { boundedBy, redriveCase } from '../../libs/reconcile/redrive.js';
import { automaticRedrivePlan } from '../../libs/reconcile/redrive-rule.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { escalate, type CheckStep } from './case-moves.js';
import type { CheckerDeps } from './check-case.js';

/** The default limit of automatic redrives per case (ReconcilerDeps.autoRedriveMax, AUTO_REDRIVE_MAX). */
export const DEFAULT_AUTO_REDRIVE_MAX = 2;

/**
 * The default wait between an automatic re-submission and the first look at the executor's
 * answer (ReconcilerDeps.resubmitGraceMs, RESUBMIT_GRACE_MS): as a person's redrive gives it.
 */
export const DEFAULT_RESUBMIT_GRACE_MS = 30_000;

/** How long each step of an automatic redrive (retire, publish, audit) keeps retrying. */
const STEP_TIMEOUT_MS = 30_000;

/** Why the reconciler considers redriving the case itself. */
export interface RedriveCause {
  /** What a person is told when the case goes to them instead (as without automatic redrives). */
  readonly why: string;
  /** Why the call is re-submitted, for the case's history and the audit record. */
  readonly reason: string;
  /** The call's full arguments, when this visit has read them already. */
  readonly full?: FullArguments;
}

/**
 * The reconciler's automatic redrive of an open UNRESOLVED case whose tool forwards its
 * idempotency key, as the rule allows it (libs/reconcile/redrive-rule.ts automaticRedrivePlan): the
 * call is re-submitted with its original idempotency key through the path a person's redrive takes
 * (libs/reconcile/redrive.ts redriveCase) — its UNRESOLVED answer retired, the request published
 * again, the case kept open as an `autoRedrive` move whose note says which automatic redrive it is
 * and why, audited as the reconciler's (source 'reconciler') with the reason. The executor's answer
 * then settles the case as it does after a person's redrive (check-case.ts readAnswer).
 *
 * Otherwise the case goes to a person: with `cause.why` alone when the rule does not apply to it,
 * and saying why not when it would (the limit is reached, no principal assertion can be had for a
 * re-submission, the original call cannot be read back, its idempotency record stands in the way).
 */
export async function redriveOrEscalate(
  c: ReconciliationCase,
  request: CaseRequest,
  deps: CheckerDeps,
  cause: RedriveCause,
  signal: AbortSignal,
): Promise<CheckStep> {
  const ran = resolved(deps, request, ranToolVersion(c, request));
  const runs = resolved(deps, request, request.toolVersion ?? undefined);
  const plan = automaticRedrivePlan(c, request, { ran, runs }, deps.autoRedriveMax);
  if (plan.kind === 'not-eligible') return escalate(c, request, deps, cause.why);
  const toPerson = (whyNot: string): Promise<CheckStep> =>
    escalate(c, request, deps, `${cause.why}. Re-sending it with the same key is safe, but ${whyNot}`);
  if (plan.kind === 'limit-reached') return toPerson(plan.detail);
  const tool = runs!;
  if (deps.resubmissionAssertion === undefined) {
    return toPerson('this reconciler has no principal assertion to re-submit it with (no signing key)');
  }
  const full = cause.full ?? (await fullArguments(c, request, deps.originalCalls));
  if (!full.ok) return toPerson(`it cannot be re-submitted: ${full.why}`);
  let assertion: string | undefined;
  try {
    assertion = await deps.resubmissionAssertion(request, tool);
  } catch (err) {
    deps.logger.error({ caseId: c.caseId, callId: request.callId, err }, 'cannot sign a re-submission');
  }
  if (assertion === undefined || assertion === '') {
    return toPerson('no principal assertion could be signed for the re-submission');
  }

  const now = deps.clock.now();
  const nextCheckAtMs = now + deps.resubmitGraceMs;
  const of = deps.autoRedriveMax;
  const note =
    `automatic redrive ${plan.number} of ${of}: ${cause.reason}; re-submitted with its original ` +
    `idempotency key (${tool.name}@${tool.version} forwards it, so the downstream deduplicates); ` +
    `first answer check in ${deps.resubmitGraceMs} ms`;
  const done = await redriveCase(deps, {
    case: c,
    request,
    tool: ran,
    plan,
    resubmit: { request, arguments: full.arguments, assertion },
    by: 'status-check',
    note,
    automatic: true,
    nextCheckAtMs,
    auditReason: `re-submitted automatically by the reconciler (automatic redrive ${plan.number} of ${of}): ${cause.reason}; the executor answers the call`,
    meta: { source: 'reconciler', producerId: deps.reconcilerId, nowMs: now },
    bounded: boundedBy(deps.clock, STEP_TIMEOUT_MS, signal),
  });
  if (done.ok) {
    deps.logger.info(
      { caseId: c.caseId, callId: request.callId, redrive: plan.number, of },
      'case redriven automatically: the call was re-submitted',
    );
    return { kind: 'redriven', nextCheckAtMs };
  }
  switch (done.kind) {
    case 'not-redrivable':
      return toPerson(`it cannot be re-submitted: ${done.detail}`);
    case 'not-moved': {
      // Moved meanwhile (another reconciler, a person): nothing done. A refused move is a bug.
      const { moved } = done;
      if (moved.reason === 'not-allowed') {
        deps.logger.error({ caseId: c.caseId, detail: moved.detail }, 'automatic redrive refused');
      } else {
        deps.logger.info({ caseId: c.caseId, reason: moved.reason }, 'case not moved');
      }
      return { kind: 'skipped' };
    }
    case 'handed-back':
      deps.logger.warn(
        { caseId: c.caseId, callId: request.callId, detail: done.detail },
        'automatic redrive failed',
      );
      return done.case.state === 'needs_manual' ? { kind: 'escalated' } : { kind: 'skipped' };
  }
}

/** The tool at `version` (the current one when undefined) for the call's tenant, strictly. */
function resolved(
  deps: Pick<CheckerDeps, 'tools'>,
  request: CaseRequest,
  version: string | undefined,
): ToolDefinition | undefined {
  const found = deps.tools.resolve(request.tool, {
    tenant: request.tenant,
    ...(version === undefined ? {} : { version }),
  });
  return found.ok ? found.tool : undefined;
}
