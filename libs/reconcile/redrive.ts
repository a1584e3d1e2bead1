import { outcomeForCode } from '../core/errors.js';
import { taskResourceKey } from '../core/idempotency-key.js';
import type { Clock } from '../core/clock.js';
import type { ToolCallRequestedEvent } from '../events/contracts.js';
import { childSpanId, traceHeaders } from '../observability/trace-context.js';
import type { CaseActor, CaseStore, ReconciliationCase } from '../ports/case-store.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import type { CaseRequest } from './case-request.js';
import { deliver, type DeliveryDeps, type DeliveryReport } from './deliver.js';
import type { RedrivePlan } from './redrive-rule.js';
import { caseAuditEvent, type ResolutionMeta } from './resolution.js';
import { caseErrorCode, resubmission } from './resubmission.js';
import { retryUntil } from './retry.js';

/** What carrying out a redrive needs. */
export interface RedriveDeps extends DeliveryDeps {
  readonly cases: CaseStore;
}

/** Runs a piece of work with a signal that stops its retries (a time limit, a shutdown). */
export type Bounded = <T>(work: (signal: AbortSignal) => Promise<T>) => Promise<T>;

/**
 * A {@link Bounded} whose signal aborts after `timeoutMs` by `clock`, or when `outer` aborts.
 */
export function boundedBy(clock: Clock, timeoutMs: number, outer?: AbortSignal): Bounded {
  return async (work) => {
    const timeout = new AbortController();
    const timer = new AbortController();
    clock.sleep(timeoutMs, timer.signal).then(
      () => timeout.abort(new Error('operation timed out')),
      () => undefined,
    );
    const onOuter = (): void => timeout.abort(outer?.reason);
    if (outer?.aborted) onOuter();
    else outer?.addEventListener('abort', onOuter, { once: true });
    try {
      return await work(timeout.signal);
    } finally {
      timer.abort();
      outer?.removeEventListener('abort', onOuter);
    }
  };
}

/** A redrive decided on (see redrive-rule.ts), ready to be carried out by {@link redriveCase}. */
export interface RedriveOrder {
  /** The case as read: it moves only from this version. */
  readonly case: ReconciliationCase;
  readonly request: CaseRequest | undefined;
  /** The call's tool (its audit allow-list and version); undefined redacts every argument. */
  readonly tool: ToolDefinition | undefined;
  readonly plan: Exclude<RedrivePlan, { kind: 'refuse' }>;
  /**
   * For a re-submission: the request with its full arguments (read back from the calls topic) and
   * the principal assertion the re-submission is signed with.
   */
  readonly resubmit?: {
    readonly request: CaseRequest;
    readonly arguments: Readonly<Record<string, unknown>>;
    readonly assertion: string;
  };
  /** Who redrives: a person (`operator:<id>`), or the reconciler itself (`status-check`, automatic). */
  readonly by: CaseActor;
  /** Why, as the case's history keeps it. */
  readonly note: string;
  /** The reconciler's own redrive of an open case (CaseChange.autoRedrive), not a person's. */
  readonly automatic: boolean;
  /** When the case's first check after the redrive is due. */
  readonly nextCheckAtMs: number;
  /** The audit decision's reason. */
  readonly auditReason: string;
  /** Who the audit record is from; its record id is `<source>:<caseId>:v<version>`. */
  readonly meta: ResolutionMeta;
  /** Bounds each retried step (reading the store, retiring the answer, publishing). */
  readonly bounded: Bounded;
}

/** What a redrive did. Nothing was written unless `ok`, or `handedBack`. */
export type RedriveResult =
  | {
      readonly ok: true;
      readonly case: ReconciliationCase;
      readonly delivery: DeliveryReport;
      readonly resubmitted: boolean;
    }
  /** The call's idempotency record stands in the way of a re-submission (see `reason`); nothing changed. */
  | { readonly ok: false; readonly kind: 'not-redrivable'; readonly detail: string }
  /** The case was not as read (moved meanwhile, gone) or the move was refused; nothing changed. */
  | {
      readonly ok: false;
      readonly kind: 'not-moved';
      readonly moved: Exclude<Awaited<ReturnType<CaseStore['transition']>>, { ok: true }>;
    }
  /**
   * The case moved, but the re-submission could not be retired or published: it was handed back
   * to a person (needs_manual; `case` is as it is now) and nothing was re-submitted.
   */
  | {
      readonly ok: false;
      readonly kind: 'handed-back';
      readonly detail: string;
      readonly case: ReconciliationCase;
    };

/**
 * Carries out a redrive: the one path of a person's redrive (libs/reconcile/operations.ts) and of
 * the reconciler's automatic one (services/reconciler/auto-redrive.ts).
 *
 * For a re-submission, the call's idempotency record is read first (a peek): a verdict recorded
 * under the key, or a run in progress, refuses it. Then the case moves to `open` (due at
 * `nextCheckAtMs`), from the version read: of a redrive and a resolution racing on one case exactly
 * one decides, and nothing is published for a redrive that lost. A resolution landing after this
 * move holds the call's key first (see operations' resolveByHand), so the re-submission is then
 * answered with the resolution instead of running. An UNRESOLVED call's answer is retired only
 * after the move (`retireUnresolved`), so a redrive that lost changes nothing; a resolution that
 * settles the record first keeps its verdict (retiring touches UNRESOLVED records only). The
 * original request goes to the calls topic again with the same call id and idempotency key. A
 * re-submission that cannot be retired or published hands the case back to needs_manual. Last, the
 * redrive is audited (as `meta` says: a person's, or the reconciler's).
 */
export async function redriveCase(deps: RedriveDeps, order: RedriveOrder): Promise<RedriveResult> {
  const { case: c, plan, bounded } = order;
  const retrying = (signal: AbortSignal) => ({
    clock: deps.clock,
    backoff: deps.backoff,
    logger: deps.logger,
    signal,
  });
  let outgoing: { request: CaseRequest; event: ToolCallRequestedEvent } | undefined;
  if (plan.kind === 'resubmit' && order.resubmit !== undefined) {
    const { request, arguments: args, assertion } = order.resubmit;
    if (c.state === 'resolved_failed' || plan.retireUnresolved) {
      const answered = await answeredByResolution(deps, request, plan.retireUnresolved);
      if (answered !== undefined) return { ok: false, kind: 'not-redrivable', detail: answered };
    }
    outgoing = { request, event: resubmission(request, args, assertion, deps.clock.now()) };
  }

  const moved = await deps.cases.transition(
    c.caseId,
    {
      to: 'open',
      by: order.by,
      note: order.note,
      nextCheckAtMs: order.nextCheckAtMs,
      ...(order.automatic ? { autoRedrive: true as const } : {}),
    },
    { state: c.state, version: c.version },
  );
  if (!moved.ok) return { ok: false, kind: 'not-moved', moved };

  if (outgoing !== undefined) {
    const { request: req, event } = outgoing;
    const fields = { caseId: c.caseId, callId: req.callId };
    const retired =
      plan.kind === 'resubmit' && plan.retireUnresolved && req.idempotencyKey !== ''
        ? await bounded((signal) =>
            retryUntil(
              "retiring the call's UNRESOLVED answer",
              () => retireUnresolved(deps, req),
              retrying(signal),
              fields,
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
              fields,
            ),
          );
    if (published === undefined) {
      // Nothing went out: hand the case back to a person rather than wait for a call never sent.
      const back = await deps.cases.transition(
        c.caseId,
        {
          to: 'needs_manual',
          by: order.by,
          note:
            retired === undefined
              ? "the call's UNRESOLVED answer could not be retired (idempotency store unreachable); nothing was re-submitted"
              : 'the re-submission could not be published; nothing was re-submitted',
        },
        { state: 'open', version: moved.case.version },
      );
      return {
        ok: false,
        kind: 'handed-back',
        case: back.ok ? back.case : moved.case,
        detail:
          retired === undefined
            ? 'the idempotency store could not be reached; nothing was re-submitted, try again'
            : 'the calls topic could not be reached; nothing was re-submitted, try again',
      };
    }
  }

  const errorCode = caseErrorCode(c);
  const audit = caseAuditEvent({
    case: moved.case,
    request: order.request,
    outcome: c.reason === 'UNRESOLVED' || errorCode === undefined ? 'UNRESOLVED' : outcomeForCode(errorCode),
    ...(errorCode === undefined ? {} : { errorCode }),
    decision: 'short-circuit',
    reason: order.auditReason,
    recordId: `${order.meta.source}:${c.caseId}:v${moved.case.version}`,
    auditFields: order.tool?.auditFields,
    toolVersion: order.tool?.version,
    meta: order.meta,
  });
  const delivery = await bounded((signal) => deliver(deps, audit === undefined ? {} : { audit }, signal));
  return { ok: true, case: moved.case, delivery, resubmitted: outgoing !== undefined };
}

/**
 * Why a re-submission of the call would not run it, or undefined when it would. A call a person
 * (or a check) resolved has its verdict in the idempotency record, so the executor would answer the
 * re-submission with it; with `unresolvedIsFree` (an UNRESOLVED call the redrive retires the
 * answer of, see `retireUnresolved`) an UNRESOLVED record does not count. Read with a peek, so
 * looking changes nothing; a record of other arguments, a lapsed lease (the next claim takes it
 * over) or a call without a trackable key is not in the way.
 */
async function answeredByResolution(
  deps: RedriveDeps,
  request: CaseRequest,
  unresolvedIsFree: boolean,
): Promise<string | undefined> {
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
}

/**
 * Retires the UNRESOLVED answer of a call that is safe to run again (its tool forwards the
 * idempotency key, or is read-only): the record is settled to expire at once, so the executor
 * claims the re-submission afresh and runs it instead of answering "unknown" again. Only an
 * UNRESOLVED record is touched (IdempotencyStore.settle); a verdict recorded meanwhile stays, and
 * the executor answers the re-submission with it. Resolves whether the record was retired.
 */
function retireUnresolved(deps: RedriveDeps, request: CaseRequest): Promise<boolean> {
  return deps.idempotency.settle(
    request.idempotencyKey,
    { outcome: 'UNRESOLVED', result: null, completedAtMs: deps.clock.now() },
    1,
  );
}
