import type { PrincipalRefusalReason } from '../../libs/auth/principal-refusal.js';
import type { ToolgateError } from '../../libs/core/errors.js';
import type { ExecutionContext, NormalizedToolCall, Principal } from '../../libs/core/types.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import type { TraceContext } from '../../libs/observability/trace-context.js';
import type { PipelineRun } from '../../libs/pipeline/guard-pipeline.js';
import { parseCallArguments } from './call-arguments.js';
import type { CallTrace } from './call-trace.js';
import type { ExecutorDeps } from './executor-deps.js';
import { noExecutorObserver } from './executor-observer.js';
import { refusalRun } from './refusal.js';
import { acceptanceTimeMs } from './acceptance-time.js';
import { priorClaim } from './prior-claim.js';
import { argumentsAsSent } from './result-event.js';
import { verifyCallPrincipal } from './verify-principal.js';

/** The one run of a call, and whom the audit record and dead letter name. */
export interface CallRun {
  readonly run: PipelineRun;
  readonly principalId: string;
  /** The call span's context when a traced pipeline ran: what the outputs are children of. */
  readonly outgoing?: TraceContext;
  /**
   * Why the principal was refused, when it was (the caller logs and counts it): the closed reason
   * and the verifier's sentence, which never contains the token.
   */
  readonly principalRefusal?: { readonly reason: PrincipalRefusalReason; readonly detail: string };
}

/**
 * Runs a routable, well-formed request:
 * 1. verify the signed principal, as of when the broker accepted the call (`acceptedAtMs`, the
 *    message timestamp, when `deps.trustsMessageTimestamps`; else now), and bind it to the request's
 *    tenant — a refusal is an UNAUTHORIZED result and audit record, and nothing else happens; unless
 *    the call's idempotency key already has a claim (`priorClaim`, when `deps.idempotency` is
 *    given): the call may have taken effect, so it is answered UNRESOLVED (and dead-lettered by the
 *    caller), never "not run";
 * 2. parse the arguments — anything but a JSON object is SCHEMA_INVALID, likewise;
 * 3. unless the batch turned stale (or the hard shutdown began) meanwhile, run the guard pipeline
 *    with the event's idempotency key (the pipeline recomputes it and refuses a mismatch) and a
 *    context whose authorization facts come only from the verified principal, and the request's
 *    `traceparent` as the parent of the call's span. `signal` is the hard shutdown signal only: a
 *    rebalance never cuts a started call short.
 * Refusals of steps 1–2 are reported to `deps.observer` (the pipeline never sees them).
 * Resolves undefined when the call was not started because the batch is stale. Never rejects for a
 * refusal; rejects only on a defect (the pipeline itself is total).
 */
export async function runCall(
  deps: Pick<
    ExecutorDeps,
    | 'verifier'
    | 'pipeline'
    | 'clock'
    | 'observer'
    | 'trustsMessageTimestamps'
    | 'idempotency'
    | 'tools'
    | 'ownerId'
  >,
  request: ToolCallRequestedEvent,
  trace: CallTrace,
  scope: { readonly stale: AbortSignal; readonly killTools: AbortSignal },
  acceptedAtMs: number = Number.NaN,
): Promise<CallRun | undefined> {
  const startedAtMs = deps.clock.now();
  const refuse = (
    principalId: string,
    stage: 'authorize' | 'validate-input',
    error: ToolgateError,
    auditReason: string,
  ): CallRun => {
    const finishedAtMs = deps.clock.now();
    const run = refusalRun({
      event: request,
      traceId: trace.traceId,
      principalId,
      args: undefined,
      stage,
      error,
      auditReason,
      startedAtMs,
      finishedAtMs,
    });
    (deps.observer ?? noExecutorObserver).callAnswered(
      run.result,
      Math.max(0, finishedAtMs - startedAtMs),
      argumentsAsSent(request.argumentsJson),
    );
    return { principalId, run };
  };

  const judgedAtMs = acceptanceTimeMs(acceptedAtMs, deps.trustsMessageTimestamps === true, startedAtMs);
  const checked = await verifyCallPrincipal(
    deps.verifier,
    request.principalAssertion,
    request.tenant,
    judgedAtMs,
  );
  if (!checked.ok) {
    const prior =
      deps.idempotency === undefined
        ? ({ kind: 'none' } as const)
        : await priorClaim({ idempotency: deps.idempotency, tools: deps.tools }, request);
    const refused =
      prior.kind === 'may-have-run'
        ? refuse(checked.principalId, 'authorize', prior.error, `${checked.auditReason} ${prior.reason}`)
        : refuse(checked.principalId, 'authorize', checked.error, checked.auditReason);
    return { ...refused, principalRefusal: { reason: checked.refusal, detail: checked.auditReason } };
  }
  const { principal } = checked;
  const parsed = parseCallArguments(request.argumentsJson);
  if (!parsed.ok) return refuse(principal.id, 'validate-input', parsed.error, parsed.error.message);
  if (scope.stale.aborted || scope.killTools.aborted) return undefined;
  const ran = await deps.pipeline.run(toCall(request, parsed.args), toContext(request, principal, trace), {
    signal: scope.killTools,
    parent: trace.parent,
    ...(request.idempotencyKey === '' ? {} : { idempotencyKey: request.idempotencyKey }),
  });
  const run: PipelineRun = { result: ran.result, audit: ran.audit };
  return {
    run,
    principalId: principal.id,
    ...(ran.outgoing === undefined ? {} : { outgoing: ran.outgoing }),
  };
}

function toCall(request: ToolCallRequestedEvent, args: Record<string, unknown>): NormalizedToolCall {
  return {
    id: request.callId,
    name: request.tool,
    arguments: args,
    ...(request.toolVersion === null ? {} : { version: request.toolVersion }),
  };
}

/** The pipeline's context: coordinates from the event, authorization facts only from `principal`. */
function toContext(
  request: ToolCallRequestedEvent,
  principal: Principal,
  trace: CallTrace,
): ExecutionContext {
  return {
    principal,
    tenant: request.tenant,
    taskId: request.taskId,
    step: request.step,
    index: request.index,
    traceId: trace.traceId,
    ...(request.deadlineMs === null ? {} : { deadlineMs: request.deadlineMs }),
  };
}
