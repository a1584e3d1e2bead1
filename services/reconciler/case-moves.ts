import type { CaseChange, CaseStore, ReconciliationCase } from '../../libs/ports/case-store.js';
import type { CaseRequest } from '../../libs/reconcile/case-request.js';
import type { DeliveryReport } from '../../libs/reconcile/deliver.js';
import type { Logger } from '../../libs/ports/logger.js';
import { manualNote } from './manual-note.js';

/**
 * Moves `c` exactly from the version it was read at: of two reconcilers (or a reconciler and a
 * person) acting on one case, only the first move lands. Returns the moved case, or undefined when
 * the case changed meanwhile or the move is refused (logged; nothing was written). Rejects when the
 * store is unreachable.
 */
export async function moveCase(
  cases: CaseStore,
  logger: Logger,
  c: ReconciliationCase,
  change: CaseChange,
): Promise<ReconciliationCase | undefined> {
  const moved = await cases.transition(c.caseId, change, { state: c.state, version: c.version });
  if (moved.ok) return moved.case;
  const detail = moved.reason === 'not-allowed' ? moved.detail : undefined;
  const log = moved.reason === 'not-allowed' ? logger.error.bind(logger) : logger.info.bind(logger);
  log(
    { caseId: c.caseId, from: c.state, to: change.to, version: c.version, reason: moved.reason, detail },
    'case not moved',
  );
  return undefined;
}

/** What one visit to a due case did. */
export type CheckStep =
  | {
      readonly kind: 'resolved';
      readonly state: 'resolved_succeeded' | 'resolved_failed';
      readonly delivery: DeliveryReport | undefined;
    }
  | { readonly kind: 'rescheduled'; readonly nextCheckAtMs: number }
  /** The reconciler re-submitted the call itself (an automatic redrive); its answer is read from then. */
  | { readonly kind: 'redriven'; readonly nextCheckAtMs: number }
  | { readonly kind: 'escalated' }
  /** The case moved under us (another checker, a person) or the move was refused: nothing done. */
  | { readonly kind: 'skipped' };

/** Hands the case to a person; the note says why and what the call was. */
export async function escalate(
  c: ReconciliationCase,
  request: CaseRequest | undefined,
  deps: { readonly cases: CaseStore; readonly logger: Logger },
  why: string,
): Promise<CheckStep> {
  const moved = await moveCase(deps.cases, deps.logger, c, {
    to: 'needs_manual',
    by: 'status-check',
    note: manualNote(c, request, why),
  });
  if (moved === undefined) return { kind: 'skipped' };
  deps.logger.info({ caseId: c.caseId, callId: c.callId, reason: c.reason }, 'case needs a person');
  return { kind: 'escalated' };
}
