import { isEffectApplied, OUTCOMES, type Outcome } from '../../libs/core/outcome.js';
import type { ExecutionContext } from '../../libs/core/types.js';
import { isReadOnlyTool } from '../../libs/guards/claim-record.js';
import type { ToolResolver } from '../../libs/pipeline/deps.js';
import type { CaseStore, ReconciliationCase, StatusCheckRecord } from '../../libs/ports/case-store.js';
import type { PeekResult } from '../../libs/ports/idempotency-store.js';
import { caseRequest, type CaseRequest } from '../../libs/reconcile/case-request.js';
import { checksThisRound, nextWaitMs, redrivenAtMs } from '../../libs/reconcile/check-schedule.js';
import { redactOutput } from '../../libs/reconcile/redact-output.js';
import { notAppliedError, type Resolution } from '../../libs/reconcile/resolution.js';
import { notAppliedTrust, runStatusCheck } from '../../libs/reconcile/status-check.js';
import type { ToolDefinition } from '../../libs/registry/tool-definition.js';
import { resolveCaseTool } from '../../libs/reconcile/resolve-tool.js';
import {
  deliver,
  resolutionPlan,
  type DeliveryDeps,
  type DeliveryReport,
} from '../../libs/reconcile/deliver.js';
import { fullArguments, type OriginalCalls } from '../../libs/reconcile/original-call.js';
import { escalate, moveCase, type CheckStep } from './case-moves.js';
import { redriveOrEscalate } from './auto-redrive.js';
import { triage } from './triage.js';
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
  /**
   * At most this many automatic redrives per case (see auto-redrive.ts); then a person. 0: none.
   */
  readonly autoRedriveMax: number;
  /** After an automatic re-submission, how long the executor gets before its answer is first read. */
  readonly resubmitGraceMs: number;
  /**
   * The signed principal assertion an automatic re-submission of `request` is sent with (dead
   * letters keep none), for `tool`, the version the re-submission runs. Undefined (or answering
   * undefined): no automatic redrive; the case goes to a person.
   */
  readonly resubmissionAssertion?: (
    request: CaseRequest,
    tool: ToolDefinition,
  ) => Promise<string | undefined>;
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
 *   retryable: the model may try again as a new step), audited and answered likewise — but only
 *   when the check STARTED at least the tool's settle time (`retrySafety.settleMs`) after the call
 *   ended (libs/reconcile/status-check.ts notAppliedTrust); an earlier "not-applied" counts as
 *   "unknown";
 * - "unknown": the check is recorded and the next one scheduled after the next wait; after the last
 *   wait of the schedule, or when there is no usable check at all, the case goes to needs_manual
 *   with a note saying what a person needs;
 * - a tool without a status check whose retry safety is `forwards-key` (re-sending with the same
 *   key is safe by its own declaration) is redriven by the reconciler itself, within its limit of
 *   automatic redrives (auto-redrive.ts); any other goes to a person.
 *
 * The case moves first, from the exact version read, and only then are the outputs delivered: of
 * concurrent visitors exactly one acts, so a requester never gets two different resolutions. The
 * price: a process killed between the move and the delivery leaves a resolved case whose requester
 * keeps its UNRESOLVED answer (still a terminal result: every call gets one), and later duplicates
 * are still told UNRESOLVED; a person sees the resolution on the case.
 *
 * A re-submitted call (a redriven POISON or EXHAUSTED case, or a redriven UNRESOLVED one whose tool
 * is read-only or forwards the key: see libs/reconcile/redrive-rule.ts) was answered by the
 * executor itself, so its case is only closed here, never answered or settled. Each visit first
 * reads the call's idempotency record without changing it (IdempotencyStore.peek; see
 * {@link resubmissionVerdict}): an answer the executor recorded closes the case or hands it to a
 * person at once; none yet (absent, in flight) falls back to the tool's status check when it has
 * one — where "not-applied" only means "not yet" and counts as unknown — or else to waiting out the
 * schedule, then needs_manual. A read-only tool keeps no record, so without a status check its case
 * goes to a person at once. A re-submission that ended UNRESOLVED again is redriven automatically
 * when the rule allows it (auto-redrive.ts), else it goes to a person. `signal` stops the check and
 * the delivery retries (shutdown).
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
  if (request === undefined) {
    return escalate(c, request, deps, 'The dead letter holds no usable request, so nothing can be checked');
  }
  const tool = resolveCaseTool(deps.tools, c, request);
  if (!tool.ok) return escalate(c, request, deps, `The tool cannot be resolved: ${tool.why}`);
  const def = tool.tool;
  const resubmitted = redriven && isResubmission(c, def);
  const number = checksThisRound(c) + 1;
  const of = deps.schedule.length;
  let pending: string | undefined;
  if (resubmitted) {
    const read = await readAnswer(c, request, deps, def, number, signal);
    if (read.kind === 'step') return read.step;
    pending = read.detail;
  }
  const full = await fullArguments(c, request, deps.originalCalls);
  if (!full.ok) return escalate(c, request, deps, `Nothing can be checked: ${full.why}`);
  if (def.retrySafety.kind !== 'status-check') {
    const why = `${def.name}@${def.version} has no status check (retry safety "${def.retrySafety.kind}"), so only a person can tell whether the effect happened`;
    if (def.retrySafety.kind !== 'forwards-key') return escalate(c, request, deps, why);
    const reason = `the outcome is unknown and ${def.name}@${def.version} has no status check`;
    return redriveOrEscalate(c, request, deps, { why, reason, full }, signal);
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

  const startedAtMs = deps.clock.now();
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

  // "Not applied" is acted on only once the tool's settle time has passed since the call ended.
  const trust = notAppliedTrust(def, c, startedAtMs);
  if (answer.state === 'not-applied' && !resubmitted && trust.trusted) {
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

  // For a re-submitted call "not applied" only means "not yet", and so it does before the tool's
  // settle time has passed: it is recorded as unknown.
  const detail =
    answer.state !== 'not-applied'
      ? (checked.detail ?? 'unknown')
      : resubmitted
        ? 'not applied yet; the re-submitted call may still be queued'
        : `answered not-applied ${trust.sinceEndMs} ms after the call ended, before ${def.name}@${def.version}'s settle time of ${trust.settleMs} ms: counted as unknown`;
  return roundGoesOn(c, request, deps, {
    number,
    atMs,
    detail: pending === undefined ? detail : `${detail}; idempotency record: ${pending}`,
    what: 'status check',
    why: resubmitted
      ? `The call was re-submitted and its status checks never confirmed it`
      : `The status checks could not tell whether ${def.name} took effect`,
  });
}

/** One inconclusive visit of a round: the case stays open for the next wait, or, after the last, goes to a person. */
async function roundGoesOn(
  c: ReconciliationCase,
  request: CaseRequest,
  deps: CheckerDeps,
  visit: {
    readonly number: number;
    readonly atMs: number;
    readonly detail: string;
    /** What each visit of the round is called in notes ("status check", "answer check"). */
    readonly what: string;
    /** Why a person is needed once the round is over. */
    readonly why: string;
  },
): Promise<CheckStep> {
  const { number, atMs, detail } = visit;
  const statusCheck: StatusCheckRecord = { atMs, answer: { state: 'unknown' } };
  const wait = nextWaitMs(deps.schedule, number);
  if (wait === undefined) {
    const moved = await moveCase(deps.cases, deps.logger, c, {
      to: 'needs_manual',
      by: 'status-check',
      note: manualNote(c, request, visit.why, { made: number, lastDetail: detail }),
      statusCheck,
    });
    return moved === undefined ? { kind: 'skipped' } : { kind: 'escalated' };
  }
  const nextCheckAtMs = atMs + wait;
  const moved = await moveCase(deps.cases, deps.logger, c, {
    to: 'open',
    by: 'status-check',
    note: `${visit.what} ${number} of ${deps.schedule.length}: ${detail}; next check in ${wait} ms`,
    statusCheck,
    nextCheckAtMs,
  });
  return moved === undefined ? { kind: 'skipped' } : { kind: 'rescheduled', nextCheckAtMs };
}

/**
 * The visit of a re-submitted call, as far as its idempotency record decides it: a `step` when the
 * record closes the case or hands it to a person, or when the tool has no status check (then the
 * round waits for the record, see {@link roundGoesOn}); otherwise `pending` with what the record
 * showed, and the status check decides.
 */
async function readAnswer(
  c: ReconciliationCase,
  request: CaseRequest,
  deps: CheckerDeps,
  def: ToolDefinition,
  number: number,
  signal: AbortSignal,
): Promise<
  { readonly kind: 'step'; readonly step: CheckStep } | { readonly kind: 'pending'; readonly detail: string }
> {
  const hasCheck = def.retrySafety.kind === 'status-check';
  if (isReadOnlyTool(def)) {
    if (hasCheck) return { kind: 'pending', detail: 'none kept (the tool is read-only)' };
    const why = `The call was re-submitted, but ${def.name}@${def.version} is read-only: it keeps no idempotency record and has no status check, so the executor's answer shows only in its result (call ${request.callId} on ${request.replyTopic})`;
    return { kind: 'step', step: await escalate(c, request, deps, why) };
  }
  const verdict = resubmissionVerdict(await peekRecord(deps, request.idempotencyKey), request);
  if (
    verdict.kind === 'needs-person' &&
    verdict.unresolvedAgain === true &&
    def.retrySafety.kind === 'forwards-key'
  ) {
    const reason = 'the re-submitted call ended UNRESOLVED again';
    return {
      kind: 'step',
      step: await redriveOrEscalate(c, request, deps, { why: verdict.why, reason }, signal),
    };
  }
  if (verdict.kind !== 'pending') {
    return { kind: 'step', step: await closeResubmitted(c, request, deps, def, verdict) };
  }
  if (hasCheck) return { kind: 'pending', detail: verdict.detail };
  const step = await roundGoesOn(c, request, deps, {
    number,
    atMs: deps.clock.now(),
    detail: verdict.detail,
    what: 'answer check',
    why: "The call was re-submitted and its idempotency record never showed the executor's answer",
  });
  return { kind: 'step', step };
}

/**
 * Whether the redrive that opened this round re-submitted the call
 * (libs/reconcile/redrive-rule.ts): always for POISON and EXHAUSTED; for UNRESOLVED exactly when
 * the tool is read-only or forwards the key (one with a status check is rechecked instead).
 */
function isResubmission(c: ReconciliationCase, tool: ToolDefinition): boolean {
  return (
    c.reason !== 'UNRESOLVED' ||
    tool.retrySafety.kind === 'read-only' ||
    tool.retrySafety.kind === 'forwards-key'
  );
}

/**
 * What a re-submitted call's idempotency record says, mapped so that nothing is reported as
 * succeeded unless its effect is known to have happened, nor as failed unless it is known not to:
 * - `applied`: completed SUCCESS (or DUPLICATE), or EXECUTION_ERROR BAD_OUTPUT — the tool ran and
 *   returned, only its output was refused, so the effect exists (as a status check's "applied" with
 *   a bad result is, and resolved_succeeded is what stops anyone running it again);
 * - `not-applied`: completed with any other EXECUTION_ERROR (a verdict that it was not carried out)
 *   or a refusal outcome (stopped before the tool was reached);
 * - `needs-person`: completed UNRESOLVED (the re-submission's outcome is unknown too), an outcome
 *   this reconciler does not know, or a record of other arguments (the re-submission is refused as a
 *   conflict and never runs);
 * - `pending`: no record or one in flight — the executor has not answered yet. A call that ended in
 *   a definite failure releases its key and leaves no record, so "absent" never counts as failed.
 * `record` an Error means the store could not be read: pending too. Pure.
 */
export function resubmissionVerdict(
  record: PeekResult | Error,
  request: Pick<CaseRequest, 'argumentsFingerprint'>,
): ResubmissionVerdict {
  if (record instanceof Error) {
    return { kind: 'pending', detail: `the idempotency store could not be read (${record.message})` };
  }
  if (record.kind === 'absent') {
    return {
      kind: 'pending',
      detail:
        'no answer recorded yet (the re-submission may still be queued; a definite failure leaves no record either)',
    };
  }
  if (request.argumentsFingerprint !== undefined && record.fingerprint !== request.argumentsFingerprint) {
    return {
      kind: 'needs-person',
      why: "The call's idempotency key holds a record of other arguments, so the re-submission is refused as a conflict and never runs",
    };
  }
  if (record.kind === 'in-flight') {
    return {
      kind: 'pending',
      detail: record.leaseExpired
        ? `the executor running the re-submission (${record.owner}) stopped mid-call; the next delivery takes it over`
        : `the re-submission is running (${record.owner})`,
    };
  }
  return completedVerdict(record.stored.outcome, record.stored.result);
}

/** The verdict of a completed record (see {@link resubmissionVerdict}). */
function completedVerdict(outcome: string, result: unknown): ResubmissionVerdict {
  const recorded = `the re-submitted call's idempotency record answers ${outcome}`;
  if (!isOutcome(outcome)) {
    return {
      kind: 'needs-person',
      why: `The re-submitted call's idempotency record answers "${outcome}", an outcome this reconciler does not know`,
    };
  }
  if (isEffectApplied(outcome)) return { kind: 'applied', result, note: recorded };
  if (outcome === 'UNRESOLVED') {
    return {
      kind: 'needs-person',
      why: 'The call was re-submitted and ended UNRESOLVED again: its idempotency record says the executor could not tell whether the effect happened',
      unresolvedAgain: true,
    };
  }
  const code = errorCode(result);
  if (outcome === 'EXECUTION_ERROR' && code === 'BAD_OUTPUT') {
    return {
      kind: 'applied',
      result: null,
      note: `${recorded} (BAD_OUTPUT): the tool ran and its effect happened, but its output was refused`,
    };
  }
  return {
    kind: 'not-applied',
    note: `${recorded}${code === undefined ? '' : ` (${code})`}: it was not carried out`,
  };
}

/** What the record of a re-submitted call says; see {@link resubmissionVerdict}. */
export type ResubmissionVerdict =
  | { readonly kind: 'applied'; readonly result: unknown; readonly note: string }
  | { readonly kind: 'not-applied'; readonly note: string }
  | {
      readonly kind: 'needs-person';
      readonly why: string;
      /** The re-submission ended UNRESOLVED again (its tool may allow another, automatic, redrive). */
      readonly unresolvedAgain?: true;
    }
  | { readonly kind: 'pending'; readonly detail: string };

/** The record of `key` read without changing it, or the error that kept it from being read. */
async function peekRecord(deps: CheckerDeps, key: string): Promise<PeekResult | Error> {
  if (key === '') return { kind: 'absent' };
  try {
    return await deps.idempotency.peek(key);
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * Acts on a recorded answer to a re-submitted call: resolved_succeeded / resolved_failed with the
 * record's answer kept as the round's check, or needs_manual. Nothing is delivered: the executor
 * answered the call (and recorded it) itself.
 */
async function closeResubmitted(
  c: ReconciliationCase,
  request: CaseRequest,
  deps: CheckerDeps,
  def: ToolDefinition,
  verdict: Exclude<ResubmissionVerdict, { kind: 'pending' }>,
): Promise<CheckStep> {
  if (verdict.kind === 'needs-person') return escalate(c, request, deps, verdict.why);
  const atMs = deps.clock.now();
  const to = verdict.kind === 'applied' ? 'resolved_succeeded' : 'resolved_failed';
  const moved = await moveCase(deps.cases, deps.logger, c, {
    to,
    by: 'status-check',
    note: `${verdict.note} (${def.name}@${def.version})`,
    statusCheck: {
      atMs,
      answer:
        verdict.kind === 'applied' ? { state: 'applied', result: verdict.result } : { state: 'not-applied' },
    },
  });
  if (moved === undefined) return { kind: 'skipped' };
  return { kind: 'resolved', state: to, delivery: undefined };
}

function isOutcome(outcome: string): outcome is Outcome {
  return (OUTCOMES as readonly string[]).includes(outcome);
}

/** The `code` of a stored error result (`{ code, message }`), if it has one. */
function errorCode(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const code = (result as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
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
