import type { ExecutionContext } from '../../libs/core/types.js';
import type { ToolResolver } from '../../libs/pipeline/deps.js';
import type { CaseStore, ReconciliationCase } from '../../libs/ports/case-store.js';
import { caseRequest, type CaseRequest } from '../../libs/reconcile/case-request.js';
import { checksThisRound, nextWaitMs, redrivenAtMs } from '../../libs/reconcile/check-schedule.js';
import { redactOutput } from '../../libs/reconcile/redact-output.js';
import { notAppliedError, type Resolution } from '../../libs/reconcile/resolution.js';
import { runStatusCheck } from '../../libs/reconcile/status-check.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { escalate, moveCase, type CheckStep } from './case-moves.js';
import { resolveCaseTool } from './resolve-tool.js';
import { deliver, resolutionPlan, type DeliveryDeps, type DeliveryReport } from './deliver.js';
import { triage } from './triage.js';
import { fullArguments, type OriginalCalls } from './original-call.js';
import { manualNote, reasonNote } from './manual-note.js';

/** What checking a case needs besides delivery. */
export interface CheckerDeps extends DeliveryDeps {
  readonly cases: CaseStore;
  readonly tools: ToolResolver;
  /** This reconciler: `producerId` of what it publishes, the service principal of its checks. */
  readonly reconcilerId: string;
  /** Waits before each check of a round (see libs/reconcile/check-schedule.ts). */
  readonly schedule: readonly number[];
  /** Limit on one status check; default the tool's own timeout. */
  readonly checkTimeoutMs?: number;
  /**
   * Reads a call's full arguments back from the calls topic (cases keep only the allow-listed
   * fields). Undefined: only cases whose dead letter kept the full arguments can be checked.
   */
  readonly originalCalls?: OriginalCalls;
}

/**
 * One visit to an open, due case (an unknown outcome is settled by asking the downstream, never by
 * running the call again):
 * - a case never triaged (its dead letter's consumer stopped before) is triaged, not checked;
 * - a POISON or EXHAUSTED case nobody redrove goes to a person;
 * - otherwise the call's tool is resolved for its tenant (the version it ran, else the current
 *   one) and, when its retry safety is a status check, the check runs once with the request's
 *   validated arguments (read back from the calls topic: the case keeps only the allow-listed
 *   fields) and the ORIGINAL idempotency key;
 * - "applied": the case is resolved_succeeded; the idempotency record is settled to SUCCESS with the
 *   output-schema-validated, redacted result; an audit record and a superseding result (source
 *   'reconciler') go out. "not-applied": resolved_failed, settled as EXECUTION_ERROR (TIMEOUT,
 *   retryable: the model may try again as a new step), audited and answered likewise;
 * - "unknown": the check is recorded and the next one scheduled after the next wait; after the last
 *   wait of the schedule, or when there is no usable check at all, the case goes to needs_manual
 *   with a note saying what a person needs.
 *
 * The case moves first, from the exact version read, and only then are the outputs delivered: of
 * concurrent visitors exactly one acts, so a requester never gets two different resolutions. The
 * price: a process killed between the move and the delivery leaves a resolved case whose requester
 * keeps its UNRESOLVED answer (still a terminal result: every call gets one), and later duplicates
 * are still told UNRESOLVED; a person sees the resolution on the case. A re-submitted call (a redriven POISON or EXHAUSTED case)
 * was answered by the executor itself, so its case is only closed here — on "applied" — and never
 * answered or settled; "not-applied" is not conclusive for it (the re-submission may still be
 * queued) and counts as unknown. `signal` stops the check and the delivery retries (shutdown).
 */
export async function checkCase(
  c: ReconciliationCase,
  deps: CheckerDeps,
  signal: AbortSignal,
): Promise<CheckStep> {
  // Opened but never triaged (the consumer stopped in between): triage now, do not check early.
  if (c.history.length === 0) return (await triage(c, deps)) ?? { kind: 'skipped' };
  const redriven = redrivenAtMs(c) !== undefined;
  const request = caseRequest(c);
  if (c.reason !== 'UNRESOLVED' && !redriven) return escalate(c, request, deps, reasonNote(c));
  const resubmitted = c.reason !== 'UNRESOLVED';
  if (request === undefined) {
    return escalate(c, request, deps, 'The dead letter holds no usable request, so nothing can be checked');
  }
  const full = await fullArguments(c, request, deps.originalCalls);
  if (!full.ok) return escalate(c, request, deps, `Nothing can be checked: ${full.why}`);
  const tool = resolveCaseTool(deps.tools, c, request);
  if (!tool.ok) return escalate(c, request, deps, `The tool cannot be resolved: ${tool.why}`);
  const def = tool.tool;
  if (def.retrySafety.kind !== 'status-check') {
    return escalate(
      c,
      request,
      deps,
      `${def.name}@${def.version} has no status check (retry safety "${def.retrySafety.kind}"), so only a person can tell whether the effect happened`,
    );
  }
  const args = await def.input.safeParseAsync(full.arguments);
  if (!args.success) {
    return escalate(
      c,
      request,
      deps,
      `The call's arguments no longer pass ${def.name}@${def.version}'s input schema, so its status check cannot run`,
    );
  }

  const number = checksThisRound(c) + 1;
  const of = deps.schedule.length;
  const checked = await runStatusCheck(
    def,
    args.data,
    {
      ctx: checkContext(request, deps.reconcilerId),
      idempotencyKey: request.idempotencyKey,
      attempt: number,
    },
    { timeoutMs: deps.checkTimeoutMs ?? def.timeoutMs, clock: deps.clock, signal },
  );
  const atMs = deps.clock.now();
  const answer = checked.answer;

  if (answer.state === 'applied') {
    const output = await redactOutput(def, answer.result);
    const resolution: Resolution = output.ok
      ? { outcome: 'SUCCESS', payload: output.payload }
      : { outcome: 'EXECUTION_ERROR', error: output.error };
    const note =
      `status check ${number} of ${of} answered applied` +
      (output.ok ? '' : '; its result does not match the output schema, so it is reported as BAD_OUTPUT');
    const moved = await moveCase(deps.cases, deps.logger, c, {
      to: 'resolved_succeeded',
      by: 'status-check',
      note,
      statusCheck: { atMs, answer: { state: 'applied', result: output.ok ? output.payload : null } },
    });
    if (moved === undefined) return { kind: 'skipped' };
    const delivery = resubmitted
      ? undefined
      : await deliverResolution(moved, request, def, resolution, note, deps, signal);
    return { kind: 'resolved', state: 'resolved_succeeded', delivery };
  }

  if (answer.state === 'not-applied' && !resubmitted) {
    const note = `status check ${number} of ${of} answered not-applied`;
    const moved = await moveCase(deps.cases, deps.logger, c, {
      to: 'resolved_failed',
      by: 'status-check',
      note,
      statusCheck: { atMs, answer },
    });
    if (moved === undefined) return { kind: 'skipped' };
    const resolution: Resolution = { outcome: 'EXECUTION_ERROR', error: notAppliedError(false) };
    const delivery = await deliverResolution(moved, request, def, resolution, note, deps, signal);
    return { kind: 'resolved', state: 'resolved_failed', delivery };
  }

  // For a re-submitted call "not applied" only means "not yet": it is recorded as unknown.
  const inconclusive = { state: 'unknown' } as const;
  const detail =
    answer.state === 'not-applied'
      ? 'not applied yet; the re-submitted call may still be queued'
      : (checked.detail ?? 'unknown');
  const wait = nextWaitMs(deps.schedule, number);
  if (wait === undefined) {
    const why = resubmitted
      ? `The call was re-submitted and its status checks never confirmed it`
      : `The status checks could not tell whether ${def.name} took effect`;
    const moved = await moveCase(deps.cases, deps.logger, c, {
      to: 'needs_manual',
      by: 'status-check',
      note: manualNote(c, request, why, { made: number, lastDetail: detail }),
      statusCheck: { atMs, answer: inconclusive },
    });
    return moved === undefined ? { kind: 'skipped' } : { kind: 'escalated' };
  }
  const nextCheckAtMs = atMs + wait;
  const moved = await moveCase(deps.cases, deps.logger, c, {
    to: 'open',
    by: 'status-check',
    note: `status check ${number} of ${of}: ${detail}; next check in ${wait} ms`,
    statusCheck: { atMs, answer: inconclusive },
    nextCheckAtMs,
  });
  return moved === undefined ? { kind: 'skipped' } : { kind: 'rescheduled', nextCheckAtMs };
}

function deliverResolution(
  moved: ReconciliationCase,
  request: CaseRequest,
  tool: ToolDefinition,
  resolution: Resolution,
  reason: string,
  deps: CheckerDeps,
  signal: AbortSignal,
): Promise<DeliveryReport> {
  const meta = { source: 'reconciler' as const, producerId: deps.reconcilerId, nowMs: deps.clock.now() };
  const plan = resolutionPlan({
    case: moved,
    request,
    tool,
    resolution,
    reason: `reconciled: ${reason}`,
    recordId: `reconciler:${moved.caseId}:v${moved.version}`,
    meta,
  });
  return deliver(deps, plan, signal);
}

/**
 * The context a status check runs in: the call's own coordinates and trace, and as principal the
 * reconciler service acting for the call's principal. No deadline: the call's has long passed, and
 * the check has its own timeout.
 */
function checkContext(request: CaseRequest, reconcilerId: string): ExecutionContext {
  return {
    principal: {
      id: reconcilerId,
      tenant: request.tenant,
      kind: 'service',
      scopes: [],
      roles: [],
      ...(request.principalId === null ? {} : { onBehalfOf: request.principalId }),
    },
    tenant: request.tenant,
    taskId: request.taskId,
    step: request.step,
    index: request.index,
    traceId: request.traceId,
  };
}
