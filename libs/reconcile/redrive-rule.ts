import type { ReconciliationCase } from '../ports/case-store.js';
import type { CaseRequest } from './case-request.js';
import type { ToolDefinition } from '../registry/tool-definition.js';
import { automaticRedrives } from './check-schedule.js';

/**
 * What a redrive of a case would do, decided from the case alone (its state, reason, request) and
 * its tool's retry safety. The redrive operation acts on it and `dlq show` prints its next-step hints
 * from it, so the hint and the command can never disagree.
 *
 * - `recheck`: another round of status checks (UNRESOLVED, the tool has a status check);
 * - `resubmit`: the original request is published to the calls topic again. POISON / EXHAUSTED: the
 *   action was not carried out, so running it is safe whatever the tool. UNRESOLVED: only when
 *   re-running cannot duplicate the effect (retry safety `read-only` or `forwards-key`: the
 *   downstream deduplicates on the forwarded idempotency key); `retireUnresolved` then says the
 *   call's UNRESOLVED idempotency answer must be retired first, else the executor would answer the
 *   re-submission with it instead of running it;
 * - `refuse`: the redrive is refused with `reason` and `detail`, and nothing changes.
 *
 * This is a person's redrive. The reconciler's own (automatic) redrive of an open case follows
 * {@link automaticRedrivePlan}; both are carried out by redrive.ts.
 */
export type RedrivePlan =
  | { readonly kind: 'recheck' }
  | { readonly kind: 'resubmit'; readonly retireUnresolved: boolean }
  | {
      readonly kind: 'refuse';
      readonly reason: 'not-allowed' | 'not-redrivable';
      readonly detail: string;
    };

/** Whether a person may move the case at all: open cases are the checker's, resolved_succeeded is final. */
export function redrivableState(c: Pick<ReconciliationCase, 'state'>): boolean {
  return c.state === 'needs_manual' || c.state === 'resolved_failed';
}

/**
 * The redrive rule (see {@link RedrivePlan}). `tool` is the call's resolved definition, undefined
 * when it cannot be resolved (an UNRESOLVED call is then refused: whether re-running is safe is
 * unknown). Pure.
 */
export function redrivePlan(
  c: Pick<ReconciliationCase, 'state' | 'reason'>,
  request: CaseRequest | undefined,
  tool: Pick<ToolDefinition, 'name' | 'version' | 'retrySafety'> | undefined,
): RedrivePlan {
  if (!redrivableState(c)) {
    return { kind: 'refuse', reason: 'not-allowed', detail: `a ${c.state} case cannot be redriven` };
  }
  if (request?.arguments === undefined) {
    return {
      kind: 'refuse',
      reason: 'not-redrivable',
      detail:
        c.reason === 'UNRESOLVED'
          ? 'the dead letter holds no usable request, so there is nothing to check or re-submit'
          : 'the original request (with its arguments) is not available; there is nothing to re-submit',
    };
  }
  if (c.reason !== 'UNRESOLVED') return { kind: 'resubmit', retireUnresolved: false };
  if (tool === undefined) {
    return {
      kind: 'refuse',
      reason: 'not-redrivable',
      detail:
        `${request.tool}${request.toolVersion === null ? '' : `@${request.toolVersion}`} is not in the ` +
        "tool catalog loaded here, which decides by the tool's retry safety whether running the call " +
        'again is safe: load the catalog that defines it (--catalog <module>, or TOOLGATE_CATALOG_MODULE)',
    };
  }
  switch (tool.retrySafety.kind) {
    case 'status-check':
      return { kind: 'recheck' };
    case 'read-only':
    case 'forwards-key':
      return { kind: 'resubmit', retireUnresolved: true };
    case 'none':
      return {
        kind: 'refuse',
        reason: 'not-redrivable',
        detail: `${tool.name}@${tool.version} has retry safety "none": running the call again could apply its effect twice and no status check can tell; find out from the downstream and resolve the case by hand`,
      };
  }
}

/**
 * Whether the reconciler may redrive an open case by itself (see {@link automaticRedrivePlan}):
 * `resubmit` (`number` is this automatic redrive's, 1-based), `not-eligible` when the case is not
 * one it redrives by itself (a person decides, as without automatic redrives), or `limit-reached`
 * when it would be but has had its `limit` automatic redrives. `detail` says why, for a person.
 */
export type AutomaticRedrivePlan =
  | { readonly kind: 'resubmit'; readonly retireUnresolved: true; readonly number: number }
  | { readonly kind: 'not-eligible'; readonly detail: string }
  | { readonly kind: 'limit-reached'; readonly detail: string };

type RuleTool = Pick<ToolDefinition, 'name' | 'version' | 'retrySafety'>;

/**
 * The automatic redrive rule: the reconciler re-submits a call itself, with its original
 * idempotency key, only when that cannot duplicate the effect by the tool's own declaration and
 * only a bounded number of times:
 * - the case is open and UNRESOLVED (the outcome is unknown; POISON and EXHAUSTED are a person's);
 * - its request, arguments included, is known;
 * - its tool declares retry safety `forwards-key` (the downstream deduplicates on the key) — both
 *   `ran`, the version the call ran as registered now (strictly that version: one no longer
 *   registered does not count), and `runs`, the version a re-submission would run (the request's
 *   pinned version, else the current one); `read-only` and `none` tools are not redriven by
 *   themselves, a `status-check` tool is checked instead;
 * - it has had fewer than `limit` automatic redrives (`history` entries with `autoRedrive`).
 * Pure.
 */
export function automaticRedrivePlan(
  c: Pick<ReconciliationCase, 'state' | 'reason' | 'history'>,
  request: CaseRequest | undefined,
  tools: { readonly ran: RuleTool | undefined; readonly runs: RuleTool | undefined },
  limit: number,
): AutomaticRedrivePlan {
  const notEligible = (detail: string): AutomaticRedrivePlan => ({ kind: 'not-eligible', detail });
  if (c.state !== 'open') return notEligible(`a ${c.state} case is not redriven automatically`);
  if (c.reason !== 'UNRESOLVED') return notEligible(`a ${c.reason} case is not redriven automatically`);
  if (request?.arguments === undefined) return notEligible('the original request is not available');
  const { ran, runs } = tools;
  if (ran === undefined) return notEligible('the tool version the call ran is no longer registered');
  if (ran.retrySafety.kind !== 'forwards-key') {
    return notEligible(
      `${ran.name}@${ran.version} has retry safety "${ran.retrySafety.kind}", not "forwards-key"`,
    );
  }
  if (runs === undefined) return notEligible('the tool version a re-submission would run cannot be resolved');
  if (runs.retrySafety.kind !== 'forwards-key') {
    return notEligible(
      `a re-submission would run ${runs.name}@${runs.version}, whose retry safety is "${runs.retrySafety.kind}", not "forwards-key"`,
    );
  }
  const done = automaticRedrives(c);
  if (done >= limit) {
    return {
      kind: 'limit-reached',
      detail:
        limit <= 0
          ? 'automatic redrives are off (limit 0)'
          : `the reconciler has redriven it by itself ${done} time${done === 1 ? '' : 's'}, its limit`,
    };
  }
  return { kind: 'resubmit', retireUnresolved: true, number: done + 1 };
}
