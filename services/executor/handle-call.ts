import { randomUUID } from 'node:crypto';
import { ToolgateError } from '../../libs/core/errors.js';
import type { ToolCallRequestedEvent } from '../../libs/events/contracts.js';
import type { PipelineRun } from '../../libs/pipeline/guard-pipeline.js';
import type { BusMessage } from '../../libs/ports/event-bus.js';
import { toAuditEvent } from './audit-event.js';
import { DEFAULT_BACKOFF } from './backoff.js';
import { encodeOutputs, type CallOutputs } from './call-outputs.js';
import { callDeadLetter, deadLetterReasonFor, poisonDeadLetter } from './dead-letter-event.js';
import { decodeCall } from './decode-call.js';
import { checkEnvelope } from './envelope-check.js';
import type { ExecutorDeps } from './executor-deps.js';
import { publishPhases } from './publish-outcome.js';
import { refusalRun } from './refusal.js';
import { toResultEvent } from './result-event.js';
import { runCall } from './run-call.js';
import { callTrace, type CallTrace } from './trace-context.js';
import { UNVERIFIED_PRINCIPAL } from './verify-principal.js';

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
 * 1. decode — poison → POISON dead letter, no result; registry outage → retried until stale;
 * 2. envelope — no usable call id or reply address → POISON dead letter; malformed envelope →
 *    MALFORMED_EVENT result + POISON dead letter;
 * 3. principal, arguments, guard pipeline — see `runCall`;
 * 4. publish the audit record and, for UNRESOLVED or EXHAUSTED calls, the dead letter; then the
 *    result to the requester's reply partition. All carry the call's trace headers.
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
  const { clock, logger, codec, topics, ownerId } = deps;

  const publish = async (
    message: BusMessage,
    scope: HandlingScope,
    outputs: CallOutputs,
    trace?: CallTrace,
  ): Promise<boolean> => {
    const phases = await encodeOutputs(codec, topics, outputs, trace?.headers ?? {}, message.key);
    return publishPhases(deps.publisher, phases, {
      clock,
      backoff,
      logger,
      stale: scope.stale,
      kill: scope.killPublishing,
      heartbeat: scope.heartbeat,
    });
  };

  const poison = (
    message: BusMessage,
    errorMessage: string,
    request?: ToolCallRequestedEvent,
    trace?: CallTrace,
  ): CallOutputs => {
    logger.warn(
      {
        topic: message.topic,
        partition: message.partition,
        offset: message.offset,
        callId: request?.callId,
        errorMessage,
      },
      'dead-lettering a calls message that cannot be handled',
    );
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

  const resultOf = (
    request: ToolCallRequestedEvent,
    run: PipelineRun,
    trace: CallTrace,
  ): CallOutputs['result'] => ({
    topic: request.replyTopic,
    partition: request.replyPartition,
    event: toResultEvent(request, run.result, {
      producerId: ownerId,
      traceId: trace.traceId,
      completedAtMs: clock.now(),
    }),
  });

  const handle = async (message: BusMessage, scope: HandlingScope): Promise<boolean> => {
    const decoded = await decodeCall(codec, message, {
      clock,
      backoff,
      logger,
      signal: AbortSignal.any([scope.stale, scope.killPublishing]),
      heartbeat: scope.heartbeat,
    });
    if (decoded.kind === 'gave-up') return false;
    if (decoded.kind === 'poison') return publish(message, scope, poison(message, decoded.errorMessage));
    const request = decoded.event;
    const trace = callTrace(request.traceId, message.headers);

    const envelope = checkEnvelope(request, deps.replyTopics);
    if (envelope.kind === 'unroutable') {
      return publish(
        message,
        scope,
        poison(message, `malformed event: ${envelope.reason}`, request, trace),
        trace,
      );
    }
    if (envelope.kind === 'malformed') {
      const error = new ToolgateError(
        'MALFORMED_EVENT',
        'The tool call request was malformed, so it was not run.',
        {
          retryable: false,
        },
      );
      const now = clock.now();
      const refused = refusalRun({
        event: request,
        traceId: trace.traceId,
        principalId: UNVERIFIED_PRINCIPAL,
        args: undefined,
        stage: 'validate-input',
        error,
        auditReason: envelope.reason,
        startedAtMs: now,
        finishedAtMs: now,
      });
      // No audit record: the audit store indexes tenant and task, which are what is missing here.
      const outputs = poison(message, `malformed event: ${envelope.reason}`, request, trace);
      return publish(message, scope, { ...outputs, result: resultOf(request, refused, trace) }, trace);
    }

    const ran = await runCall(deps, request, trace, scope);
    if (ran === undefined) return false;
    const { run, principalId } = ran;
    const resolved = deps.tools.resolve(request.tool, {
      tenant: request.tenant,
      ...(request.toolVersion === null ? {} : { version: request.toolVersion }),
    });
    const reason = deadLetterReasonFor(run.result, resolved.ok ? resolved.tool.stateChanging : undefined);
    logger.debug(
      {
        callId: request.callId,
        tool: request.tool,
        tenant: request.tenant,
        outcome: run.result.outcome,
        partition: message.partition,
        offset: message.offset,
        traceId: trace.traceId,
      },
      'call handled',
    );
    const deadLetter =
      reason === undefined
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
        result: resultOf(request, run, trace),
      },
      trace,
    );
  };

  return async (message, scope) => {
    try {
      return await handle(message, scope);
    } catch (err) {
      logger.error(
        { err, topic: message.topic, partition: message.partition, offset: message.offset },
        'defect while handling a calls message; dead-lettering it',
      );
      try {
        return await publish(message, scope, poison(message, 'internal error while handling the message'));
      } catch (again) {
        logger.error(
          { err: again, offset: message.offset },
          'could not dead-letter the message; it will be delivered again',
        );
        return false;
      }
    }
  };
}
