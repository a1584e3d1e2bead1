import type { ToolgateError } from '../../libs/core/errors.js';
import type { CallTokens } from '../../libs/cost/token-equivalents.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import type { TraceContext } from '../../libs/observability/trace-context.js';
import { unverifiedPrincipal } from '../../libs/pipeline/call-state.js';
import type { PipelineRun } from '../../libs/pipeline/guard-pipeline.js';
import { acceptanceTimeMs } from './acceptance-time.js';
import type { CallTrace } from './call-trace.js';
import type { ExecutorDeps } from './executor-deps.js';

/** The one run of a call, and whom the audit record and dead letter name. */
export interface CallRun {
  readonly run: PipelineRun;
  /** The call span's context when a traced pipeline ran: what the outputs are children of. */
  readonly outgoing?: TraceContext;
  /** The call's token equivalents when an instrumented pipeline recorded them. */
  readonly tokens?: CallTokens;
}

/**
 * Runs a routable, well-formed request through the guard pipeline as a signed call: the pipeline's
 * ingress stages verify its principal — as of when the broker accepted the call (`acceptedAtMs`,
 * the message timestamp, when `deps.trustsMessageTimestamps`; else now) — and parse its arguments
 * (or refuse them with `argumentsRefusal`, the size refusal of a request too large to read), and
 * every later stage takes its authorization facts from the verified principal only. The event's
 * idempotency key goes with it (the pipeline recomputes it and refuses a mismatch), and the
 * request's `traceparent` is the parent of the call's span. `scope.killTools` is the hard shutdown
 * signal: a rebalance never cuts a started call short.
 *
 * Resolves undefined, running nothing, when the batch turned stale (or the hard shutdown began)
 * before the call started. Never rejects for a refusal; rejects only on a defect (the pipeline
 * itself is total).
 */
export async function runCall(
  deps: Pick<ExecutorDeps, 'pipeline' | 'clock' | 'trustsMessageTimestamps'>,
  request: ToolCallRequestedEvent,
  trace: CallTrace,
  scope: { readonly stale: AbortSignal; readonly killTools: AbortSignal },
  acceptedAtMs: number = Number.NaN,
  argumentsRefusal?: ToolgateError,
): Promise<CallRun | undefined> {
  if (scope.stale.aborted || scope.killTools.aborted) return undefined;
  const judgedAtMs = acceptanceTimeMs(acceptedAtMs, deps.trustsMessageTimestamps === true, deps.clock.now());
  const ran = await deps.pipeline.run(
    {
      id: request.callId,
      name: request.tool,
      arguments: {}, // set by the pipeline's parse-arguments stage
      ...(request.toolVersion === null ? {} : { version: request.toolVersion }),
    },
    {
      principal: unverifiedPrincipal(request.tenant), // replaced by the verify-principal stage
      tenant: request.tenant,
      taskId: request.taskId,
      step: request.step,
      index: request.index,
      traceId: trace.traceId,
      ...(request.deadlineMs === null ? {} : { deadlineMs: request.deadlineMs }),
    },
    {
      signal: scope.killTools,
      parent: trace.parent,
      signed: {
        principalAssertion: request.principalAssertion,
        argumentsJson: request.argumentsJson,
        judgedAtMs,
        ...(argumentsRefusal === undefined ? {} : { argumentsRefusal }),
      },
      ...(request.idempotencyKey === '' ? {} : { idempotencyKey: request.idempotencyKey }),
    },
  );
  const { outgoing, tokens, ...run } = ran;
  return {
    run,
    ...(outgoing === undefined ? {} : { outgoing }),
    ...(tokens === undefined ? {} : { tokens }),
  };
}
