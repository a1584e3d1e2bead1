import { randomUUID } from 'node:crypto';
import { deepFreeze } from '../../core/deep-freeze.js';
import { queryLimit, queryOffset, timeBound } from '../../audit/query.js';
import type { Clock } from '../../core/clock.js';
import type {
  CaseChange,
  CaseCountFilter,
  CaseFilter,
  CaseRef,
  CaseState,
  CaseStore,
  DeadLetterInput,
  ExpectedCase,
  ReconciliationCase,
  TransitionResult,
} from '../../ports/case-store.js';
import { applyTransition, dueBound, matchesExpected, newCase } from '../../reconcile/case-model.js';
import { caseSearch, caseSearchTexts, zeroCounts } from '../../reconcile/case-query.js';
import { settle } from '../../core/settle.js';

/**
 * Reconciliation cases in process memory, with the PostgreSQL adapter's semantics: the same case
 * model, idempotent opens by call id (by dead-letter id for poison), optimistic transitions, the same
 * list order. Each method runs synchronously to completion, so of concurrent transitions from one
 * version exactly one wins. Stored cases and returned cases are frozen. Lost when the process exits.
 */
export class MemoryCaseStore implements CaseStore {
  private readonly cases = new Map<string, ReconciliationCase>();
  private readonly byCallId = new Map<string, string>();
  private readonly byDeadLetterId = new Map<string, string>();

  constructor(private readonly clock: Clock) {}

  openFromDeadLetter(dl: DeadLetterInput): Promise<{ created: boolean; case: ReconciliationCase }> {
    return settle(() => {
      const fresh = newCase(dl, randomUUID(), this.clock.now());
      const existing = this.find(fresh.callId, fresh.deadLetterId);
      if (existing !== undefined) return { created: false, case: existing };
      const stored = deepFreeze(fresh);
      this.cases.set(stored.caseId, stored);
      if (stored.callId !== null) this.byCallId.set(stored.callId, stored.caseId);
      this.byDeadLetterId.set(stored.deadLetterId, stored.caseId);
      return { created: true, case: stored };
    });
  }

  get(ref: CaseRef): Promise<ReconciliationCase | undefined> {
    return settle(() => {
      const caseId =
        typeof ref === 'string'
          ? ref
          : 'callId' in ref
            ? this.byCallId.get(ref.callId)
            : this.byDeadLetterId.get(ref.deadLetterId);
      return caseId === undefined ? undefined : this.cases.get(caseId);
    });
  }

  list(filter: CaseFilter): Promise<ReconciliationCase[]> {
    return settle(() => {
      const limit = queryLimit(filter.limit);
      const offset = queryOffset(filter.offset);
      if (filter.dueBeforeMs !== undefined) dueBound(filter.dueBeforeMs);
      return [...this.cases.values()]
        .filter(
          (c) => matchesCaseFilter(c, filter) && (filter.state === undefined || c.state === filter.state),
        )
        .sort((a, b) => compareCases(a, b, filter))
        .slice(offset, offset + limit);
    });
  }

  countByState(filter: CaseCountFilter): Promise<Record<CaseState, number>> {
    return settle(() => {
      const counts = zeroCounts();
      for (const c of this.cases.values()) if (matchesCaseFilter(c, filter)) counts[c.state] += 1;
      return counts;
    });
  }

  transition(caseId: string, change: CaseChange, expected: ExpectedCase): Promise<TransitionResult> {
    return settle((): TransitionResult => {
      const current = this.cases.get(caseId);
      if (current === undefined) return { ok: false, reason: 'not-found' };
      if (!matchesExpected(current, expected)) return { ok: false, reason: 'state-changed', case: current };
      const applied = applyTransition(current, change, this.clock.now());
      if (!applied.ok) return { ok: false, reason: 'not-allowed', case: current, detail: applied.detail };
      const next = deepFreeze(applied.next);
      this.cases.set(caseId, next);
      return { ok: true, case: next };
    });
  }

  /** The existing case for a call, else for the dead letter itself (the order PostgreSQL uses). */
  private find(callId: string | null, deadLetterId: string): ReconciliationCase | undefined {
    const id =
      (callId === null ? undefined : this.byCallId.get(callId)) ?? this.byDeadLetterId.get(deadLetterId);
    return id === undefined ? undefined : this.cases.get(id);
  }
}

function matchesCaseFilter(
  c: ReconciliationCase,
  f: CaseCountFilter & Pick<CaseFilter, 'dueBeforeMs'>,
): boolean {
  const due = f.dueBeforeMs === undefined ? undefined : dueBound(f.dueBeforeMs);
  const search = caseSearch(f.search);
  const from = timeBound('createdFromMs', f.createdFromMs);
  const to = timeBound('createdToMs', f.createdToMs);
  return (
    (search === undefined || caseSearchTexts(c).some((t) => t.includes(search))) &&
    (f.reason === undefined || c.reason === f.reason) &&
    (from === undefined || c.createdAtMs >= from) &&
    (to === undefined || c.createdAtMs < to) &&
    (f.tenant === undefined || c.tenant === f.tenant) &&
    (f.tenants === undefined || (c.tenant !== null && f.tenants.includes(c.tenant))) &&
    (f.tool === undefined || c.tool === f.tool) &&
    (due === undefined || (c.nextCheckAtMs !== null && c.nextCheckAtMs <= due))
  );
}

/** Soonest due first when asking for due cases, otherwise oldest first; ties by case id. */
function compareCases(a: ReconciliationCase, b: ReconciliationCase, f: CaseFilter): number {
  if (f.dueBeforeMs !== undefined) {
    const byDue = (a.nextCheckAtMs ?? 0) - (b.nextCheckAtMs ?? 0);
    return byDue || a.createdAtMs - b.createdAtMs || (a.caseId < b.caseId ? -1 : a.caseId > b.caseId ? 1 : 0);
  }
  const sign = f.order === 'desc' ? -1 : 1;
  return sign * (a.createdAtMs - b.createdAtMs || (a.caseId < b.caseId ? -1 : a.caseId > b.caseId ? 1 : 0));
}
