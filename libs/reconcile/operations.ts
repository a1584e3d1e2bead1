import { outcomeForCode } from '../core/errors.js';
import { taskResourceKey } from '../core/idempotency-key.js';
import type { ToolResolver } from '../pipeline/deps.js';
import type { CaseActor, CaseStore, ReconciliationCase } from '../ports/case-store.js';
import { caseRequest, type CaseRequest } from './case-request.js';
import { checksThisRound, DEFAULT_CHECK_SCHEDULE_MS } from './check-schedule.js';
import { redactOutput } from './redact-output.js';
import { caseAuditEvent, type Resolution, type ResolutionMeta } from './resolution.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import { deliver, resolutionPlan } from './deliver.js';
import type { CaseView, OperationResult, Operations, OperationsDeps } from './operation-types.js';
import { resolveCaseTool } from './resolve-tool.js';
import { caseErrorCode, failedByHand, resubmission } from './resubmission.js';
import { retryUntil } from './retry.js';
import { childSpanId, traceHeaders } from '../observability/trace-context.js';
import type { ToolCallRequestedEvent } from '../events/contracts.js';
import { holdCall, type CallHold } from './hold-call.js';
import { fullArguments } from './original-call.js';
import { redrivePlan, type RedrivePlan } from './redrive-rule.js';

/** Builds the operations over the given stores and bus. Every write is audited. */
export function createOperations(deps: OperationsDeps): Operations {
  const firstWaitMs = deps.firstCheckWaitMs ?? DEFAULT_CHECK_SCHEDULE_MS[0]!;
  const resubmitGraceMs = deps.resubmitGraceMs ?? 30_000;
  // A held key outlives the longest the resolution may take to record itself.
  const holdLeaseMs = 2 * (deps.deliveryTimeoutMs ?? 30_000);

  /** Runs `work` with a signal that aborts after the delivery timeout. */
  const bounded = async <T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const timeout = new AbortController();
    const timer = new AbortController();
    deps.clock.sleep(deps.deliveryTimeoutMs ?? 30_000, timer.signal).then(
      () => timeout.abort(new Error('operation timed out')),
      () => undefined,
    );
    try {
      return await work(timeout.signal);
    } finally {
      timer.abort();
    }
  };

  /**
   * Why a re-submission of the call would not run it, or undefined when it would. A call a person
   * (or a check) resolved has its verdict in the idempotency record, so the executor would answer the
   * re-submission with it; with `unresolvedIsFree` (an UNRESOLVED call the redrive retires the
   * answer of, see `retireUnresolved`) an UNRESOLVED record does not count. Read with a peek, so
   * looking changes nothing; a record of other arguments, a lapsed lease (the next claim takes it
   * over) or a call without a trackable key is not in the way.
   */
  const answeredByResolution = async (
    request: CaseRequest,
    unresolvedIsFree: boolean,
  ): Promise<string | undefined> => {
    if (request.idempotencyKey === '' || request.argumentsFingerprint === undefined) return undefined;
    const record = await deps.idempotency.peek(request.idempotencyKey);
    if (record.kind === 'absent' || record.fingerprint !== request.argumentsFingerprint) return undefined;
    if (record.kind === 'in-flight') {
      return record.leaseExpired
        ? undefined
        : `the call is running right now (${record.owner}); look again once it has finished`;
    }
    if (unresolvedIsFree && record.stored.outcome === 'UNRESOLVED') return undefined;
    return `the call's idempotency record already answers with ${record.stored.outcome} (a verdict), so a re-submission would only repeat it; run it again as a new step`;
  };

  /**
   * Retires the UNRESOLVED answer of a call that is safe to run again (its tool forwards the
   * idempotency key, or is read-only): the record is settled to expire at once, so the executor
   * claims the re-submission afresh and runs it instead of answering "unknown" again. Only an
   * UNRESOLVED record is touched (IdempotencyStore.settle); a verdict recorded meanwhile stays, and
   * the executor answers the re-submission with it. Resolves whether the record was retired.
   */
  const retireUnresolved = (request: CaseRequest): Promise<boolean> =>
    deps.idempotency.settle(
      request.idempotencyKey,
      { outcome: 'UNRESOLVED', result: null, completedAtMs: deps.clock.now() },
      1,
    );

  const meta = (actor: CaseActor): ResolutionMeta => ({
    source: 'operator',
    producerId: actor,
    nowMs: deps.clock.now(),
  });

  /** The call's tool, or undefined when the catalog cannot resolve it (or is not opened: read-only use). */
  const toolOf = (c: ReconciliationCase, request: CaseRequest): ToolDefinition | undefined => {
    let tools: ToolResolver;
    try {
      tools = deps.tools;
    } catch {
      return undefined;
    }
    return resolvedOrUndefined(tools, c, request);
  };

  return {
    listCases: (filter) => deps.cases.list(filter),

    async showCase(ref) {
      const c = await deps.cases.get(ref);
      if (c === undefined) return undefined;
      const request = caseRequest(c);
      const plan = redrivePlan(c, request, request === undefined ? undefined : toolOf(c, request));
      return {
        case: c,
        request,
        checksThisRound: checksThisRound(c),
        actions: actionsFor(c, plan),
        redrive: plan,
      };
    },

    async resolveByHand(caseId, options) {
      const c = await deps.cases.get(caseId);
      if (c === undefined) return { ok: false, reason: 'not-found', detail: `no case ${caseId}` };
      const actor = operatorActor(options.by);
      const request = caseRequest(c);
      const tool = request === undefined ? undefined : resolvedOrUndefined(deps.tools, c, request);
      let resolution: Resolution;
      if (options.outcome === 'failed') {
        if (options.result !== undefined) {
          return refused(c, 'invalid-result', 'a failed resolution carries no result');
        }
        resolution = { outcome: 'EXECUTION_ERROR', error: failedByHand(c) };
      } else if (options.result === undefined) {
        resolution = { outcome: 'SUCCESS', payload: null };
      } else {
        if (tool === undefined) {
          return refused(c, 'invalid-result', 'the tool cannot be resolved, so the result cannot be checked');
        }
        const output = await redactOutput(tool, options.result);
        if (!output.ok) {
          return refused(
            c,
            'invalid-result',
            `the result does not match ${tool.name}@${tool.version}'s output schema`,
          );
        }
        resolution = { outcome: 'SUCCESS', payload: output.payload };
      }
      const to = options.outcome === 'succeeded' ? 'resolved_succeeded' : 'resolved_failed';
      // Hold the call's key before the case moves, so nothing can run the call (a queued
      // re-submission, a re-run of the turn) between the verdict and its record.
      const holdOwner = `${actor}:case:${c.caseId}`;
      let hold: CallHold | undefined;
      if (request !== undefined) {
        const held = await bounded((signal) =>
          retryUntil(
            'holding the call for the resolution',
            () => holdCall(deps.idempotency, request, holdOwner, holdLeaseMs),
            { clock: deps.clock, backoff: deps.backoff, logger: deps.logger, signal },
            { caseId: c.caseId, callId: request.callId },
          ),
        );
        if (held === undefined) {
          return refused(
            c,
            'not-allowed',
            'the idempotency store could not be reached; nothing was changed, try again',
          );
        }
        hold = held.value;
        if (hold.kind === 'running') {
          return refused(
            c,
            'not-allowed',
            `the call is running right now (${hold.owner}, e.g. a re-submission); look again once it has finished`,
          );
        }
        if (hold.kind === 'untracked') {
          deps.logger.warn(
            { caseId: c.caseId, why: hold.why },
            'the resolution cannot be recorded for the call',
          );
        }
      }
      const heldBy = hold?.kind === 'held' ? holdOwner : undefined;
      const moved = await deps.cases.transition(
        c.caseId,
        { to, by: actor, note: options.note },
        { state: c.state, version: c.version },
      );
      if (!moved.ok) {
        if (heldBy !== undefined && request !== undefined) {
          await deps.idempotency.release(request.idempotencyKey, heldBy).catch(() => false);
        }
        return notMoved(c, moved);
      }
      const plan = resolutionPlan({
        case: moved.case,
        request,
        ...(heldBy === undefined ? {} : { heldBy }),
        tool,
        resolution,
        reason: `resolved by hand (${options.outcome}) by ${actor}: ${options.note}`,
        recordId: `operator:${c.caseId}:v${moved.case.version}`,
        meta: meta(actor),
      });
      const delivery = await bounded((signal) => deliver(deps, plan, signal));
      return { ok: true, case: moved.case, delivery };
    },

    async redrive(caseId, options) {
      const c = await deps.cases.get(caseId);
      if (c === undefined) return { ok: false, reason: 'not-found', detail: `no case ${caseId}` };
      const actor = operatorActor(options.by);
      const request = caseRequest(c);
      const tool = request === undefined ? undefined : toolOf(c, request);
      const plan = redrivePlan(c, request, tool);
      if (plan.kind === 'refuse') return refused(c, plan.reason, plan.detail);
      const resubmit = plan.kind === 'resubmit';
      const now = deps.clock.now();
      const retrying = (signal: AbortSignal) => ({
        clock: deps.clock,
        backoff: deps.backoff,
        logger: deps.logger,
        signal,
      });

      let outgoing: { request: CaseRequest; event: ToolCallRequestedEvent } | undefined;
      if (resubmit) {
        if (request?.arguments === undefined) {
          return refused(
            c,
            'not-redrivable',
            'the original request (with its arguments) is not available; there is nothing to re-submit',
          );
        }
        const assertion = options.principalAssertion ?? (await deps.principalAssertion?.(request));
        if (assertion === undefined || assertion === '') {
          return refused(
            c,
            'needs-assertion',
            'a re-submission needs a signed principal assertion (dead letters do not keep one)',
          );
        }
        const args = await bounded((signal) =>
          retryUntil(
            'reading the original call',
            () => fullArguments(c, request, deps.originalCalls),
            retrying(signal),
            { caseId: c.caseId, callId: request.callId },
          ),
        );
        if (args === undefined) {
          return refused(
            c,
            'not-allowed',
            'the calls topic could not be read; nothing was re-submitted, try again',
          );
        }
        if (!args.value.ok) return refused(c, 'not-redrivable', `cannot re-submit: ${args.value.why}`);
        if (c.state === 'resolved_failed' || plan.retireUnresolved) {
          const answered = await answeredByResolution(request, plan.retireUnresolved);
          if (answered !== undefined) return refused(c, 'not-redrivable', answered);
        }
        outgoing = { request, event: resubmission(request, args.value.arguments, assertion, now) };
      }
      // The case moves first, from the version read: of a redrive and a resolution racing on one
      // case exactly one decides, and nothing is published for a redrive that lost. A resolution
      // landing after this move holds the call's key first (see resolveByHand), so the
      // re-submission is then answered with the resolution instead of running. An UNRESOLVED call's
      // answer is retired only after this move, so a redrive that lost changes nothing; a resolution
      // that settles the record first keeps its verdict (retiring touches UNRESOLVED records only).
      const moved = await deps.cases.transition(
        c.caseId,
        {
          to: 'open',
          by: actor,
          note: options.note,
          nextCheckAtMs: now + (resubmit ? resubmitGraceMs : firstWaitMs),
        },
        { state: c.state, version: c.version },
      );
      if (!moved.ok) return notMoved(c, moved);
      if (outgoing !== undefined) {
        const { request: req, event } = outgoing;
        const retired =
          plan.kind === 'resubmit' && plan.retireUnresolved && req.idempotencyKey !== ''
            ? await bounded((signal) =>
                retryUntil(
                  "retiring the call's UNRESOLVED answer",
                  () => retireUnresolved(req),
                  retrying(signal),
                  { caseId: c.caseId, callId: req.callId },
                ),
              )
            : { value: false };
        const published =
          retired === undefined
            ? undefined
            : await bounded((signal) =>
                retryUntil(
                  're-submitting the request',
                  async () =>
                    deps.publisher.publish(deps.topics.calls, [
                      {
                        key: req.resourceKey || taskResourceKey(req),
                        value: await deps.codec.encode('calls', event),
                        headers: traceHeaders(req.traceId, childSpanId()),
                      },
                    ]),
                  retrying(signal),
                  { caseId: c.caseId, callId: req.callId },
                ),
              );
        if (published === undefined) {
          // Nothing went out: hand the case back to a person rather than wait for a call never sent.
          const back = await deps.cases.transition(
            c.caseId,
            {
              to: 'needs_manual',
              by: actor,
              note:
                retired === undefined
                  ? "the call's UNRESOLVED answer could not be retired (idempotency store unreachable); nothing was re-submitted"
                  : 'the re-submission could not be published; nothing was re-submitted',
            },
            { state: 'open', version: moved.case.version },
          );
          return refused(
            back.ok ? back.case : moved.case,
            'not-allowed',
            retired === undefined
              ? 'the idempotency store could not be reached; nothing was re-submitted, try again'
              : 'the calls topic could not be reached; nothing was re-submitted, try again',
          );
        }
      }
      const errorCode = caseErrorCode(c);
      const audit = caseAuditEvent({
        case: moved.case,
        request,
        outcome:
          c.reason === 'UNRESOLVED' || errorCode === undefined ? 'UNRESOLVED' : outcomeForCode(errorCode),
        ...(errorCode === undefined ? {} : { errorCode }),
        decision: 'short-circuit',
        reason: resubmit
          ? `re-submitted by ${actor}; the executor answers the call: ${options.note}`
          : `redriven by ${actor}: another round of status checks: ${options.note}`,
        recordId: `operator:${c.caseId}:v${moved.case.version}`,
        auditFields: tool?.auditFields,
        toolVersion: tool?.version,
        meta: meta(actor),
      });
      const delivery = await bounded((signal) => deliver(deps, audit === undefined ? {} : { audit }, signal));
      return { ok: true, case: moved.case, delivery, resubmitted: resubmit };
    },
  };
}

/** The operations open to the case: a redrive only when the redrive rule would not refuse it. */
function actionsFor(c: ReconciliationCase, plan: RedrivePlan): CaseView['actions'] {
  const redrive: CaseView['actions'] = plan.kind === 'refuse' ? [] : ['redrive'];
  switch (c.state) {
    case 'open':
      return ['resolveByHand'];
    case 'needs_manual':
      return ['resolveByHand', ...redrive];
    case 'resolved_failed':
      return redrive;
    case 'resolved_succeeded':
      return [];
  }
}

/** `operator:<id>`; an id already carrying the prefix is kept as it is. */
function operatorActor(by: string): CaseActor {
  return (by.startsWith('operator:') ? by : `operator:${by}`) as CaseActor;
}

function refused(
  c: ReconciliationCase,
  reason: 'not-allowed' | 'invalid-result' | 'not-redrivable' | 'needs-assertion',
  detail: string,
): OperationResult {
  return { ok: false, reason, detail, case: c };
}

function notMoved(
  c: ReconciliationCase,
  moved: Exclude<Awaited<ReturnType<CaseStore['transition']>>, { ok: true }>,
): OperationResult {
  if (moved.reason === 'not-found') return { ok: false, reason: 'not-found', detail: `no case ${c.caseId}` };
  if (moved.reason === 'state-changed') {
    return {
      ok: false,
      reason: 'state-changed',
      detail: `the case is now ${moved.case.state}; look again`,
      case: moved.case,
    };
  }
  return { ok: false, reason: 'not-allowed', detail: moved.detail, case: moved.case };
}

function resolvedOrUndefined(
  tools: ToolResolver,
  c: ReconciliationCase,
  request: CaseRequest,
): ToolDefinition | undefined {
  const resolved = resolveCaseTool(tools, c, request);
  return resolved.ok ? resolved.tool : undefined;
}

export type {
  CaseView,
  OperationResult,
  Operations,
  OperationsDeps,
  RedriveOptions,
  ResolveByHandOptions,
} from './operation-types.js';
