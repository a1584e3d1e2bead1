import { ToolgateError } from '../core/errors.js';
import { storableText, toStorableJson } from '../audit/storable-json.js';
import type {
  CaseActor,
  CaseChange,
  CaseReason,
  CaseState,
  DeadLetterInput,
  ExpectedCase,
  ReconciliationCase,
} from '../ports/case-store.js';

/**
 * The reconciliation case state machine. Every store applies it; none writes a case another way.
 *
 * ```
 *            ┌── recheck (answer unknown; next check scheduled) ──┐
 *            │   automatic redrive (the checker re-submits a call │
 *            ▼   whose tool forwards its idempotency key)         │
 *  dead ─► open ──────────────────────────────────────────────────┘
 *  letter   │ ├─ status check "applied" / person ─► resolved_succeeded   (final)
 *           │ ├─ status check "not-applied" / person ─► resolved_failed
 *           │ └─ checks exhausted / person ─► needs_manual
 *           │
 *  needs_manual ─ person ─► resolved_succeeded | resolved_failed
 *  needs_manual ─ person ─► open              (redrive: run status checks again)
 *  resolved_failed ─ person ─► open           (redrive: the failure verdict was wrong, or the call is
 *                                              being re-submitted and must be tracked again)
 * ```
 *
 * resolved_succeeded is final: the effect happened, and undoing it is a new call, not a case move.
 * Only a person (`operator:<id>`) may resolve a case in needs_manual or redrive one; the checker's
 * own redrive (`autoRedrive`) is a move of an open case to open, with a note saying why. The automatic
 * checker may resolve an open case only with a status check whose answer says so ("applied" →
 * resolved_succeeded, "not-applied" → resolved_failed). A person must always give a note; so must any
 * escalation to needs_manual.
 */
export const CASE_TRANSITIONS: Readonly<Record<CaseState, readonly CaseState[]>> = {
  open: ['open', 'resolved_succeeded', 'resolved_failed', 'needs_manual'],
  needs_manual: ['resolved_succeeded', 'resolved_failed', 'open'],
  resolved_failed: ['open'],
  resolved_succeeded: [],
};

/** Longest note kept; longer notes are refused rather than cut (a cut note can change meaning). */
export const MAX_NOTE_LENGTH = 4000;

/** Whether `by` names a person: `operator:` followed by a non-empty id. */
export function isOperator(by: string): by is `operator:${string}` {
  return by.startsWith('operator:') && by.length > 'operator:'.length;
}

/** Why `change` may not be applied to `current`, or undefined when it may. Pure. */
export function refusal(current: ReconciliationCase, change: CaseChange): string | undefined {
  const { to, by, note } = change;
  const from = current.state;
  if (by !== 'status-check' && !isOperator(by)) return `unknown actor "${String(by)}"`;
  if (!CASE_TRANSITIONS[from].includes(to)) return `${from} → ${to} is not a move a case can make`;
  if (typeof note !== 'string' || note.length > MAX_NOTE_LENGTH)
    return 'note must be a string of at most 4000 characters';
  const person = isOperator(by);
  if (person && note.trim() === '') return 'a person must say why (note)';
  if (to === 'needs_manual' && note.trim() === '') return 'escalation to needs_manual needs a note';
  if (from !== 'open' && !person) return `only a person may move a case out of ${from}`;
  const answer = change.statusCheck?.answer.state;
  if (change.statusCheck !== undefined && !Number.isFinite(change.statusCheck.atMs)) {
    return 'statusCheck.atMs must be a finite number';
  }
  if (!person && to === 'resolved_succeeded' && answer !== 'applied') {
    return 'the checker may resolve as succeeded only with a status check that answered "applied"';
  }
  if (!person && to === 'resolved_failed' && answer !== 'not-applied') {
    return 'the checker may resolve as failed only with a status check that answered "not-applied"';
  }
  if (to === 'open' && from === 'open') {
    if (change.nextCheckAtMs === undefined) return 'staying open needs the next check time (nextCheckAtMs)';
    if (answer !== undefined && answer !== 'unknown')
      return `a status check that answered "${answer}" resolves the case`;
  }
  if (change.nextCheckAtMs !== undefined) {
    if (to !== 'open') return 'nextCheckAtMs applies only to a case that is (still) open';
    if (!Number.isFinite(change.nextCheckAtMs)) return 'nextCheckAtMs must be a finite number';
  }
  if (change.autoRedrive !== undefined) {
    if (change.autoRedrive !== true) return 'autoRedrive must be true when given';
    if (by !== 'status-check')
      return "an automatic redrive is the checker's move; a person's redrive is a redrive";
    if (from !== 'open' || to !== 'open') return 'an automatic redrive moves an open case to open';
    if (note.trim() === '') return 'an automatic redrive needs a note saying why';
    if (change.statusCheck !== undefined) return 'an automatic redrive records no status check';
  }
  return undefined;
}

/** Whether `current` is still what the caller expected. */
export function matchesExpected(current: ReconciliationCase, expected: ExpectedCase): boolean {
  return typeof expected === 'string'
    ? current.state === expected
    : current.state === expected.state && current.version === expected.version;
}

/**
 * The case after `change`, or the rule it breaks. Pure: the caller (a store) must write the result
 * only if the stored case still has `current.version`. A redriven case is due for a check at once
 * unless `nextCheckAtMs` says otherwise; leaving `open` clears the next check; a resolution is set
 * exactly while the case is resolved; the history keeps every earlier resolution.
 */
export function applyTransition(
  current: ReconciliationCase,
  change: CaseChange,
  nowMs: number,
): { ok: true; next: ReconciliationCase } | { ok: false; detail: string } {
  const detail = refusal(current, change);
  if (detail !== undefined) return { ok: false, detail };
  let check: ReconciliationCase['statusChecks'][number] | undefined;
  try {
    check = change.statusCheck && (toStorableJson(change.statusCheck) as typeof check);
  } catch {
    return { ok: false, detail: 'statusCheck must be JSON data' };
  }
  const now = Math.floor(nowMs);
  const note = storableText(change.note);
  const by = storableText(change.by) as CaseActor;
  const resolved = change.to === 'resolved_succeeded' || change.to === 'resolved_failed';
  const statusChecks = check === undefined ? current.statusChecks : [...current.statusChecks, check];
  return {
    ok: true,
    next: {
      ...current,
      state: change.to,
      statusChecks,
      nextCheckAtMs: change.to === 'open' ? Math.ceil(change.nextCheckAtMs ?? now) : null,
      resolution: resolved ? { by, note, atMs: now } : null,
      history: [
        ...current.history,
        {
          from: current.state,
          to: change.to,
          by,
          note,
          atMs: now,
          ...(change.autoRedrive === true ? { autoRedrive: true as const } : {}),
        },
      ],
      version: current.version + 1,
      updatedAtMs: now,
    },
  };
}

/**
 * The new case for a dead letter: state open, due for a status check at `nowMs`, the dead letter's
 * context and JSON fields parsed and made storable (see toStorableJson). Times are whole ms (floored).
 * Throws ToolgateError SCHEMA_INVALID when the dead letter holds something that is not JSON data
 * (e.g. a NaN time), and MALFORMED_EVENT when it has no deadLetterId, an unknown reason, or no call
 * id without being POISON. Pure.
 */
export function newCase(dl: DeadLetterInput, caseId: string, nowMs: number): ReconciliationCase {
  const now = Math.floor(nowMs);
  if (typeof dl.deadLetterId !== 'string' || dl.deadLetterId === '') malformed('deadLetterId');
  if (!REASONS.has(dl.reason)) malformed('reason');
  // Only an undecodable event may lack a call id; anything else would open a case nobody can match.
  if (dl.callId === null && dl.reason !== 'POISON') malformed('callId');
  const attempts = parseJsonField(dl.attemptsJson);
  const context: Record<string, unknown> = {
    deadLetterId: dl.deadLetterId,
    reason: dl.reason,
    errorCode: dl.errorCode,
    errorMessage: dl.errorMessage,
    request: parseJsonField(dl.requestJson),
    principalId: dl.principalId,
    traceId: dl.traceId,
    originalTopic: dl.originalTopic ?? null,
    originalPartition: dl.originalPartition ?? null,
    originalOffset: dl.originalOffset ?? null,
    originalKey: dl.originalKey ?? null,
    rawPayloadBase64: dl.rawPayloadBase64 ?? null,
    producerId: dl.producerId ?? null,
    deadLetteredAtMs: dl.createdAtMs,
  };
  const text = (v: string | null): string | null => (v === null ? null : storableText(v));
  return {
    caseId,
    deadLetterId: storableText(dl.deadLetterId),
    callId: text(dl.callId),
    tenant: text(dl.tenant),
    tool: text(dl.tool),
    idempotencyKey: text(dl.idempotencyKey),
    resourceKey: text(dl.resourceKey),
    principalId: text(dl.principalId),
    traceId: text(dl.traceId),
    reason: dl.reason,
    state: 'open',
    context: toStorableJson(context) as Record<string, unknown>,
    attemptHistory: (Array.isArray(attempts)
      ? toStorableJson(attempts)
      : [toStorableJson(attempts)]) as unknown[],
    lastKnownState: toStorableJson(parseJsonField(dl.lastKnownStateJson)),
    statusChecks: [],
    nextCheckAtMs: now,
    resolution: null,
    history: [],
    version: 1,
    createdAtMs: now,
    updatedAtMs: now,
  };
}

/**
 * `dueBeforeMs` as a whole-ms bound: stored times are integers, so `t <= x` ⟺ `t <= floor(x)`.
 * Throws ToolgateError SCHEMA_INVALID for a non-finite value.
 */
export function dueBound(dueBeforeMs: number): number {
  if (!Number.isFinite(dueBeforeMs))
    throw new ToolgateError('SCHEMA_INVALID', 'dueBeforeMs must be a finite number.');
  return Math.floor(dueBeforeMs);
}

const REASONS: ReadonlySet<string> = new Set<CaseReason>(['UNRESOLVED', 'EXHAUSTED', 'POISON']);

function malformed(field: string): never {
  throw new ToolgateError('MALFORMED_EVENT', `Malformed dead letter: ${field}.`);
}

/** Parsed JSON text; text that is not JSON is kept, marked, rather than lost. */
function parseJsonField(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { unparsed: text };
  }
}
