import type { ReconciliationCase } from '../../libs/ports/case-store.js';
import type { CaseView, OperationResult } from '../../libs/reconcile/operations.js';
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
  parts.push(c.history.length === 0 ? '  none\n' : historyText(c.history));
  parts.push(`\nNext: ${nextSteps(view)}`);
  return parts.map((p) => (p.endsWith('\n') ? p : `${p}\n`)).join('');
}

/**
 * Each history entry as label/value lines, entries separated by a blank line. Notes are shown in
 * full, wrapped to the output width (formatFields never cuts a value): a note says what to do next.
 */
function historyText(history: ReconciliationCase['history']): string {
  return history
    .map((h) =>
      formatFields([
        ['at', isoTime(h.atMs)],
        ['move', `${h.from} -> ${h.to}`],
        ['by', h.by],
        ['note', h.note],
      ]),
    )
    .join('\n');
}

/**
 * What a person can do with the case, from the operations open to it and the redrive rule the
 * redrive command applies (view.redrive), so a hint never names a move the command would refuse.
 */
function nextSteps(view: CaseView): string {
  const id = view.case.caseId;
  const steps: string[] = [];
  if (view.actions.includes('resolveByHand')) {
    steps.push(`toolgate dlq resolve ${id} --outcome succeeded|failed --by <you> --note "<why>"`);
  }
  const plan = view.redrive;
  if (view.actions.includes('redrive')) {
    steps.push(
      plan.kind === 'resubmit'
        ? `toolgate dlq redrive ${id} --by <you> --note "<why>" --assertion-file <principal.jwt>   (re-submits the call)`
        : `toolgate dlq redrive ${id} --by <you> --note "<why>"   (another round of status checks)`,
    );
  } else if (plan.kind === 'refuse' && plan.reason === 'not-redrivable') {
    steps.push(`no redrive: ${plan.detail}.`);
  }
  if (steps.length === 0) return 'nothing: the case is closed.';
  if (view.case.reason === 'POISON' && view.request === undefined) {
    steps.unshift('inspect the raw event in the case context (--json), then resolve it with the reason:');
  }
  return steps.join('\n      ');
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
