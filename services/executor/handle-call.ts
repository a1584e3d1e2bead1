import { anySignal } from '../../libs/core/any-signal.js';
import { randomUUID } from 'node:crypto';
import { DEFAULT_BACKOFF } from '../../libs/core/backoff.js';
import { ToolgateError } from '../../libs/core/errors.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import { withLogContext } from '../../libs/observability/logger.js';
import { toResultError } from '../../libs/core/result-error.js';
import type { ToolCallResult } from '../../libs/core/types.js';
import type { CallTokens } from '../../libs/cost/token-equivalents.js';
import { argumentsAsSent } from '../../libs/guards/parse-arguments.js';
import { UNVERIFIED_PRINCIPAL_ID, type PrincipalRefusal } from '../../libs/pipeline/call-state.js';
import type { BusMessage } from '../../libs/ports/event-bus.js';
import type { Logger } from '../../libs/ports/logger.js';
import { toAuditEvent } from '../../libs/runtime/audit-event.js';
import { encodeOutputs, type CallOutputs } from './call-outputs.js';
import { callTrace, outputHeaders, type CallTrace } from './call-trace.js';
import { callDeadLetter, deadLetterReasonFor, poisonDeadLetter } from '../../libs/runtime/events.js';
import { decodeCall } from './decode-call.js';
import { checkEnvelope } from './envelope-check.js';
import type { ExecutorDeps } from './executor-deps.js';
import { noExecutorObserver, type ExecutorObserver } from './executor-observer.js';
import { publishPhases } from './publish-outcome.js';
import { callTokens, toResultEvent } from './result-event.js';
import { runCall } from './run-call.js';

/** The signals a handled message lives under. */
export interface HandlingScope {
  /** Aborts when the message's batch turns stale (rebalance, stop): start nothing new. */
  readonly stale: AbortSignal;
  /** Aborts at the hard shutdown deadline: running tools are cut short. */
  readonly killTools: AbortSignal;
  /** Aborts a little after `killTools`: outputs stop being retried. */
  readonly killPublishing: AbortSignal;
  readonly heartbeat: () => Promise<void>;
}

/** Handles one calls-topic message; resolves whether it may be marked done. */
export type CallHandler = (message: BusMessage, scope: HandlingScope) => Promise<boolean>;

/**
 * Handles one calls-topic message end to end:
 *
 * 1. decode — poison → POISON dead letter, no result; registry outage → retried until stale; a
 *    request above the size limit that still decodes → (envelope permitting) a SCHEMA_INVALID
 *    result naming the sizes, its audit record and a POISON dead letter, without its arguments;
 * 2. envelope — no usable call id or reply address → POISON dead letter; malformed envelope →
 *    MALFORMED_EVENT result + POISON dead letter;
 * 3. principal, arguments, guard pipeline — see `runCall`;
 * 4. publish the audit record and, for UNRESOLVED or EXHAUSTED calls, the dead letter; then the
 *    result to the requester's reply partition. All carry a `traceparent` that makes them children
 *    of the call's span (see `outputHeaders`), and the request's `tracestate`.
 *
 * Every line logged about a message goes through a child of `deps.logger` carrying its topic,
 * partition and offset, and once decoded its callId, taskId and traceId. Dead letters the broker
 * acknowledged, and answers given without the pipeline, are reported to `deps.observer`; a refused
 * principal is also logged once at warn with its closed reason (never the token) and reported as
 * `principalRefused`.
 *
 * Resolves true once everything the message produced is acknowledged by the broker (the caller then
 * marks it done), false when it must be delivered again (stale before finishing, or publishing never
 * succeeded); redelivery is safe because the pipeline's idempotency claim answers a repeated call
 * with its original result (DUPLICATE) without running the tool again. Never rejects: a defect is
 * logged and the message is dead-lettered as POISON so it cannot stall its partition.
 */
export function createCallHandler(deps: ExecutorDeps): CallHandler {
  const backoff = deps.backoff ?? DEFAULT_BACKOFF;
  const newId = deps.newId ?? randomUUID;
  const observer = deps.observer ?? noExecutorObserver;
  const { clock, codec, topics, ownerId } = deps;

  const publish = async (
    log: Logger,
    message: BusMessage,
    scope: HandlingScope,
    outputs: CallOutputs,
    headers: Readonly<Record<string, string>> = {},
  ): Promise<boolean> => {
    const phases = await encodeOutputs(codec, topics, outputs, headers, message.key);
    const published = await publishPhases(deps.publisher, phases, {
      clock,
      backoff,
      logger: log,
      stale: scope.stale,
      kill: scope.killPublishing,
      heartbeat: scope.heartbeat,
    });
    if (published && outputs.deadLetter !== undefined) observer.deadLettered(outputs.deadLetter.reason);
    return published;
  };

  const poison = (
    log: Logger,
    message: BusMessage,
    errorMessage: string,
    request?: ToolCallRequestedEvent,
    trace?: CallTrace,
  ): CallOutputs => {
    log.warn({ errorMessage }, 'dead-lettering a calls message that cannot be handled');
    const deadLetter = poisonDeadLetter({
      message,
      errorMessage,
      ...(request === undefined ? {} : { request }),
      ...(trace === undefined ? {} : { traceId: trace.traceId }),
      producerId: ownerId,
      nowMs: clock.now(),
      ...(deps.maxRawPayloadBytes === undefined ? {} : { maxRawBytes: deps.maxRawPayloadBytes }),
    });
    return { deadLetter };
  };

  /** The result event; `tokens` are the figures the metrics recorded, when the runner returned them. */
  const resultOf = (
    request: ToolCallRequestedEvent,
    result: ToolCallResult,
    trace: CallTrace,
    tokens: CallTokens = callTokens(request, result),
  ): CallOutputs['result'] => ({
    topic: request.replyTopic,
    partition: request.replyPartition,
    event: toResultEvent(request, result, {
      producerId: ownerId,
      traceId: trace.traceId,
      completedAtMs: clock.now(),
      tokens,
    }),
  });

  const handle = async (message: BusMessage, scope: HandlingScope, log: Logger): Promise<boolean> => {
    const stopDecoding = anySignal([scope.stale, scope.killPublishing]);
    const decoded = await decodeCall(codec, message, {
      clock,
      backoff,
      logger: log,
      signal: stopDecoding.signal,
      heartbeat: scope.heartbeat,
    }).finally(() => stopDecoding.dispose());
    if (decoded.kind === 'gave-up') return false;
    if (decoded.kind === 'poison') {
      return publish(log, message, scope, poison(log, message, decoded.errorMessage));
    }
    const request = decoded.event;
    const trace = callTrace(request.traceId, message.headers);
    const callLog = withLogContext(log, {
      callId: request.callId,
      taskId: request.taskId,
      traceId: trace.traceId,
    });

    const envelope = checkEnvelope(request, deps.replyTopics);
    if (envelope.kind === 'unroutable') {
      const outputs = poison(callLog, message, `malformed event: ${envelope.reason}`, request, trace);
      return publish(callLog, message, scope, outputs, trace.headers);
    }
    if (envelope.kind === 'malformed') {
      // Answered but never run, not even its ingress stages: the envelope the pipeline would read
      // its coordinates from is what is broken. No audit record either: the audit store indexes
      // tenant and task, which are what is missing here.
      const refused = malformedResult(request);
      observer.callAnswered(refused, 0, argumentsAsSent(request.argumentsJson));
      const outputs = poison(callLog, message, `malformed event: ${envelope.reason}`, request, trace);
      return publish(
        callLog,
        message,
        scope,
        { ...outputs, result: resultOf(request, refused, trace) },
        trace.headers,
      );
    }

    const ran = await runCall(
      deps,
      request,
      trace,
      scope,
      message.timestampMs,
      decoded.kind === 'oversized' ? decoded.refusal : undefined,
    );
    if (ran === undefined) return false;
    const { run } = ran;
    const principalId = run.audit.principalId;
    if (run.principalRefusal !== undefined) {
      reportPrincipalRefusal(callLog, observer, request, principalId, run.principalRefusal);
    }
    const resolved = deps.tools.resolve(request.tool, {
      tenant: request.tenant,
      ...(request.toolVersion === null ? {} : { version: request.toolVersion }),
    });
    const reason = deadLetterReasonFor(run.result, resolved.ok ? resolved.tool.stateChanging : undefined);
    callLog.debug(
      { tool: request.tool, tenant: request.tenant, outcome: run.result.outcome },
      'call handled',
    );
    const deadLetter =
      decoded.kind === 'oversized'
        ? poison(callLog, message, decoded.errorMessage, request, trace).deadLetter
        : reason === undefined
          ? undefined
          : callDeadLetter({
              reason,
              request,
              message,
              result: run.result,
              audit: run.audit,
              principalId,
              traceId: trace.traceId,
              producerId: ownerId,
              nowMs: clock.now(),
            });
    return publish(
      callLog,
      message,
      scope,
      {
        // A call refused before the idempotency stage has no resource key of the pipeline's own; the
        // request's (the SDK's conflict key) is recorded instead, so "who tried to touch O-5512"
        // finds refusals too (AuditStore.whoDid).
        audit: toAuditEvent(
          run.audit.resourceKey === undefined && request.resourceKey !== ''
            ? { ...run.audit, resourceKey: request.resourceKey }
            : run.audit,
          { recordId: newId(), producerId: ownerId },
        ),
        ...(deadLetter === undefined ? {} : { deadLetter }),
        result: resultOf(request, run.result, trace, ran.tokens),
      },
      outputHeaders(trace, ran.outgoing),
    );
  };

  return async (message, scope) => {
    const log = withLogContext(deps.logger, {
      topic: message.topic,
      partition: message.partition,
      offset: message.offset,
    });
    try {
      return await handle(message, scope, log);
    } catch (err) {
      log.error({ err }, 'defect while handling a calls message; dead-lettering it');
      try {
        const outputs = poison(log, message, 'internal error while handling the message');
        return await publish(log, message, scope, outputs);
      } catch (again) {
        log.error({ err: again }, 'could not dead-letter the message; it will be delivered again');
        return false;
      }
    }
  };
}

/**
 * Logs a refused principal at warn, once per refusal, with its closed reason and the verifier's
 * sentence, the tool, the tenant the request claims and the principal id when one was verified
 * (the line also carries the call's context: callId, taskId, traceId), and counts it. The
 * assertion itself is never logged, nor anything taken from it.
 */
function reportPrincipalRefusal(
  log: Logger,
  observer: ExecutorObserver,
  request: ToolCallRequestedEvent,
  principalId: string,
  refusal: PrincipalRefusal,
): void {
  log.warn(
    {
      reason: refusal.reason,
      detail: refusal.detail,
      tool: request.tool,
      tenant: request.tenant,
      ...(principalId === UNVERIFIED_PRINCIPAL_ID ? {} : { principalId }),
    },
    'refused a call whose principal was not accepted',
  );
  observer.principalRefused?.(refusal.reason);
}

/** The answer to a request whose envelope is malformed: MALFORMED_EVENT, not retryable, not run. */
function malformedResult(request: ToolCallRequestedEvent): ToolCallResult {
  const error = new ToolgateError(
    'MALFORMED_EVENT',
    'The tool call request was malformed, so it was not run.',
    {
      retryable: false,
    },
  );
  return {
    callId: request.callId,
    tool: request.tool,
    outcome: error.outcome,
    error: toResultError(error),
    ...(request.idempotencyKey === '' ? {} : { idempotencyKey: request.idempotencyKey }),
    toolInvocations: 0,
  };
}
