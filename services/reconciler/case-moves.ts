import type { CaseChange, CaseStore, ReconciliationCase } from '../../libs/ports/case-store.js';
import type { ReconcilerLogger } from './logger.js';

/**
 * Moves `c` exactly from the version it was read at: of two reconcilers (or a reconciler and a
 * person) acting on one case, only the first move lands. Returns the moved case, or undefined when
 * the case changed meanwhile or the move is refused (logged; nothing was written). Rejects when the
 * store is unreachable.
 */
export async function moveCase(
  cases: CaseStore,
  logger: ReconcilerLogger,
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
