import type { ReconciliationCase } from '../ports/case-store.js';
import type { CaseRequest } from './case-request.js';
import type { ToolDefinition } from '../registry/tool-definition.js';

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
      detail: 'the tool cannot be resolved, so whether running the call again is safe is unknown',
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
