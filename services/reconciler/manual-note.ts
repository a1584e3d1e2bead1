import { MAX_NOTE_LENGTH } from '../../libs/reconcile/case-model.js';
import type { CaseRequest } from '../../libs/reconcile/case-request.js';
import type { ReconciliationCase } from '../../libs/ports/case-store.js';

/** Longest single detail (an error message, a check's failure) quoted in a note. */
const MAX_DETAIL = 300;

/** Longest reason a note gives for needing a person (it may quote a detail). */
const MAX_WHY = 1_000;

/**
 * The note a case carries into `needs_manual`: why automation gave up, what the call was, what was
 * checked, and what a person can do next. The case itself keeps the full request, attempt history,
 * last known state and every status check; the note points there. Never longer than the case model
 * allows. Pure.
 */
export function manualNote(
  c: ReconciliationCase,
  request: CaseRequest | undefined,
  why: string,
  checks?: { readonly made: number; readonly lastDetail?: string },
): string {
  const call = [
    `call ${c.callId ?? '(none)'}`,
    `tool ${request?.tool ?? c.tool ?? '(unknown)'}`,
    `tenant ${c.tenant ?? request?.tenant ?? '(unknown)'}`,
    `resource ${c.resourceKey ?? request?.resourceKey ?? '(unknown)'}`,
    `idempotency key ${c.idempotencyKey ?? request?.idempotencyKey ?? '(none)'}`,
    `trace ${c.traceId ?? request?.traceId ?? '(none)'}`,
  ].join(', ');
  const checked =
    checks === undefined
      ? ''
      : ` ${checks.made} status check${checks.made === 1 ? '' : 's'} made this round, none conclusive` +
        (checks.lastDetail === undefined ? '.' : ` (last: ${cut(checks.lastDetail)}).`);
  const next =
    ' Find out from the downstream whether the effect exists, then resolve the case by hand' +
    ' (succeeded, with its result, or failed), or redrive it.';
  return cut(`${cut(why, MAX_WHY)}.${checked} About: ${call}.${next}`, MAX_NOTE_LENGTH);
}

/** Why a case of each dead-letter reason needs a person from the start. */
export function reasonNote(c: ReconciliationCase): string {
  const error = `${cut(textOf(c.context.errorCode))}: ${cut(textOf(c.context.errorMessage))}`;
  switch (c.reason) {
    case 'POISON':
      return `POISON: the event could not be handled (${error}); nothing ran for it. The case context keeps the raw payload or the decoded request`;
    case 'EXHAUSTED':
      return `EXHAUSTED: the call failed after its retries (${error}); the action was not carried out and nothing retries it by itself`;
    case 'UNRESOLVED':
      return `UNRESOLVED: the outcome is unknown (${error})`;
  }
}

function cut(text: string, max = MAX_DETAIL): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? '');
}
