import type { ReconciliationCase } from '../../libs/ports/case-store.js';
import { caseRequest } from '../../libs/reconcile/case-request.js';
import type { CheckerDeps } from './check-case.js';
import { escalate, moveCase, type CheckStep } from './case-moves.js';
import { reasonNote } from './manual-note.js';

/**
 * The first move of a case fresh from its dead letter (open, no history yet): an UNRESOLVED call is
 * scheduled for its first status check one wait from now (the schedule's first entry: it
 * waits before checking, since the downstream may still be applying the effect); a POISON or
 * EXHAUSTED one goes straight to a person. Any other case is left alone, so triaging a redelivered
 * dead letter's case again is harmless. Returns what it did.
 */
export async function triage(
  c: ReconciliationCase,
  deps: Pick<CheckerDeps, 'cases' | 'logger' | 'clock' | 'schedule'>,
): Promise<CheckStep | undefined> {
  if (c.state !== 'open' || c.history.length > 0) return undefined;
  if (c.reason !== 'UNRESOLVED') return escalate(c, caseRequest(c), deps, reasonNote(c));
  const wait = deps.schedule[0]!;
  const nextCheckAtMs = deps.clock.now() + wait;
  const moved = await moveCase(deps.cases, deps.logger, c, {
    to: 'open',
    by: 'status-check',
    note: `outcome unknown; first status check in ${wait} ms`,
    nextCheckAtMs,
  });
  return moved === undefined ? { kind: 'skipped' } : { kind: 'rescheduled', nextCheckAtMs };
}
