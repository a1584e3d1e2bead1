import type { ToolResolver } from '../pipeline/deps.js';
import type { CaseActor, CaseStore, ReconciliationCase } from '../ports/case-store.js';
import { caseRequest, type CaseRequest } from './case-request.js';
import { checksThisRound, DEFAULT_CHECK_SCHEDULE_MS } from './check-schedule.js';
import { redactOutput } from './redact-output.js';
import type { Resolution, ResolutionMeta } from './resolution.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import { deliver, resolutionPlan } from './deliver.js';
import type { CaseView, OperationResult, Operations, OperationsDeps } from './operation-types.js';
import { resolveCaseTool } from './resolve-tool.js';
import { failedByHand } from './resubmission.js';
import { retryUntil } from './retry.js';
import { holdCall, type CallHold } from './hold-call.js';
import { fullArguments } from './original-call.js';
import { redrivePlan, type RedrivePlan } from './redrive-rule.js';
import { boundedBy, redriveCase, type RedriveOrder } from './redrive.js';

/** Builds the operations over the given stores and bus. Every write is audited. */
export function createOperations(deps: OperationsDeps): Operations {
  const firstWaitMs = deps.firstCheckWaitMs ?? DEFAULT_CHECK_SCHEDULE_MS[0]!;
  const resubmitGraceMs = deps.resubmitGraceMs ?? 30_000;
  // A held key outlives the longest the resolution may take to record itself.
  const holdLeaseMs = 2 * (deps.deliveryTimeoutMs ?? 30_000);

  /** Runs `work` with a signal that aborts after the delivery timeout. */
  const bounded = boundedBy(deps.clock, deps.deliveryTimeoutMs ?? 30_000);

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

      let outgoing: RedriveOrder['resubmit'];
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
            { clock: deps.clock, backoff: deps.backoff, logger: deps.logger, signal },
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
        outgoing = { request, arguments: args.value.arguments, assertion };
      }
      const done = await redriveCase(deps, {
        case: c,
        request,
        tool,
        plan,
        ...(outgoing === undefined ? {} : { resubmit: outgoing }),
        by: actor,
        note: options.note,
        automatic: false,
        nextCheckAtMs: deps.clock.now() + (resubmit ? resubmitGraceMs : firstWaitMs),
        auditReason: resubmit
          ? `re-submitted by ${actor}; the executor answers the call: ${options.note}`
          : `redriven by ${actor}: another round of status checks: ${options.note}`,
        meta: meta(actor),
        bounded,
      });
      if (done.ok) return { ok: true, case: done.case, delivery: done.delivery, resubmitted: resubmit };
      switch (done.kind) {
        case 'not-redrivable':
          return refused(c, 'not-redrivable', done.detail);
        case 'not-moved':
          return notMoved(c, done.moved);
        case 'handed-back':
          return refused(done.case, 'not-allowed', done.detail);
      }
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
