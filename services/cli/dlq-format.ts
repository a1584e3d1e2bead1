import type { ReconciliationCase } from '../../libs/ports/case-store.js';
import type { CaseView, OperationResult } from '../reconciler/operations.js';
import { isoTime } from './audit-format.js';
import { formatFields, formatTable } from './table.js';

/** Cases as a table, one line each, in the order given. */
export function casesTable(cases: readonly ReconciliationCase[]): string {
  return formatTable(
    [
      { header: 'CASE' },
      { header: 'STATE' },
      { header: 'REASON' },
      { header: 'TOOL', maxWidth: 32 },
      { header: 'TENANT', maxWidth: 24 },
      { header: 'RESOURCE', maxWidth: 40 },
      { header: 'CREATED' },
      { header: 'NEXT CHECK' },
    ],
    cases.map((c) => [
      c.caseId,
      c.state,
      c.reason,
      c.tool,
      c.tenant,
      c.resourceKey,
      isoTime(c.createdAtMs),
      isoTime(c.nextCheckAtMs),
    ]),
  );
}

/** One case in full: identity, why it exists, the request, checks, history and what can be done. */
export function caseDetails(view: CaseView): string {
  const c = view.case;
  const context = c.context as { errorCode?: unknown; errorMessage?: unknown };
  const parts = [
    formatFields([
      ['case', c.caseId],
      ['state', c.state],
      ['reason', c.reason],
      ['error', `${text(context.errorCode)}: ${text(context.errorMessage)}`],
      ['tool', c.tool],
      ['tenant', c.tenant],
      ['resource', c.resourceKey],
      ['call', c.callId],
      ['dead letter', c.deadLetterId],
      ['idempotency key', c.idempotencyKey],
      ['principal', c.principalId],
      ['trace', c.traceId],
      ['created', isoTime(c.createdAtMs)],
      ['updated', isoTime(c.updatedAtMs)],
      ['next check', isoTime(c.nextCheckAtMs)],
      ['checks this round', view.checksThisRound],
      ['version', c.version],
      [
        'resolution',
        c.resolution === null
          ? null
          : `${c.resolution.by} at ${isoTime(c.resolution.atMs)}: ${c.resolution.note}`,
      ],
      ['arguments', view.request?.arguments === undefined ? null : JSON.stringify(view.request.arguments)],
      ['last known state', c.lastKnownState === null ? null : JSON.stringify(c.lastKnownState)],
    ]),
  ];
  parts.push(`\nStatus checks (${c.statusChecks.length}):`);
  parts.push(
    c.statusChecks.length === 0
      ? '  none\n'
      : formatTable(
          [{ header: 'AT' }, { header: 'ANSWER' }],
          c.statusChecks.map((s) => [isoTime(s.atMs), s.answer.state]),
        ),
  );
  parts.push(`\nHistory (${c.history.length}):`);
  parts.push(
    c.history.length === 0
      ? '  none\n'
      : formatTable(
          [
            { header: 'AT' },
            { header: 'FROM' },
            { header: 'TO' },
            { header: 'BY', maxWidth: 40 },
            { header: 'NOTE', maxWidth: 80 },
          ],
          c.history.map((h) => [isoTime(h.atMs), h.from, h.to, h.by, h.note]),
        ),
  );
  parts.push(`\nNext: ${nextSteps(view)}`);
  return parts.map((p) => (p.endsWith('\n') ? p : `${p}\n`)).join('');
}

function nextSteps(view: CaseView): string {
  const id = view.case.caseId;
  if (view.actions.length === 0) return 'nothing: the case is closed.';
  return view.actions
    .map((a) =>
      a === 'resolveByHand'
        ? `toolgate dlq resolve ${id} --outcome succeeded|failed --by <you> --note "<why>"`
        : `toolgate dlq redrive ${id} --by <you> --note "<why>"`,
    )
    .join('\n      ');
}

/** The text for a state-changing operation that succeeded. */
export function operationSummary(result: Extract<OperationResult, { ok: true }>, verb: string): string {
  const d = result.delivery;
  const yes = (b: boolean): string => (b ? 'yes' : 'no');
  const lines = [
    `${verb}: case ${result.case.caseId} is now ${result.case.state} (version ${result.case.version}).`,
    ...(result.resubmitted === undefined
      ? []
      : [`re-submitted to the calls topic: ${yes(result.resubmitted)}`]),
    `idempotency record settled: ${yes(d.settled)}`,
    `audit record published:     ${yes(d.audited)}`,
    `result sent to requester:   ${yes(d.answered)}`,
  ];
  if (!d.complete)
    lines.push('DELIVERY INCOMPLETE: a dependency stayed unreachable; see the warnings above.');
  return `${lines.join('\n')}\n`;
}

function text(value: unknown): string {
  return typeof value === 'string'
    ? value
    : value === undefined || value === null
      ? '-'
      : JSON.stringify(value);
}
