import type { StatusCheckAnswer } from '../core/types.js';

/**
 * Where a reconciliation case stands (the allowed moves are in libs/reconcile/case-model.ts):
 * - `open`: the reconciler owns it and status-checks it when `nextCheckAtMs` comes;
 * - `needs_manual`: automation gave up; a person must decide;
 * - `resolved_succeeded` / `resolved_failed`: the effect is known to have / not have happened.
 */
export type CaseState = 'open' | 'resolved_succeeded' | 'resolved_failed' | 'needs_manual';

/** Why the call was dead-lettered: unknown outcome, retries exhausted, or an unreadable event. */
export type CaseReason = 'UNRESOLVED' | 'EXHAUSTED' | 'POISON';

/** Who moved a case: the automatic status checker, or a named person (`operator:<id>`). */
export type CaseActor = 'status-check' | `operator:${string}`;

/** One status check of the downstream, and what it answered. */
export interface StatusCheckRecord {
  readonly atMs: number;
  readonly answer: StatusCheckAnswer;
}

export interface CaseResolution {
  readonly by: CaseActor;
  readonly note: string;
  readonly atMs: number;
}

/** One entry of a case's history; every transition adds one, none is ever removed. */
export interface CaseTransitionRecord {
  readonly from: CaseState;
  readonly to: CaseState;
  readonly by: CaseActor;
  readonly note: string;
  readonly atMs: number;
  /** Set (only) on the reconciler's own redrive of an open case; see {@link CaseChange.autoRedrive}. */
  readonly autoRedrive?: true;
}

/**
 * The call a dead letter is about, as a dead letter and the case it opens both name it. Every field
 * is null only for a poison event that could not be decoded.
 */
export interface DeadLetteredCall {
  readonly callId: string | null;
  readonly tenant: string | null;
  readonly tool: string | null;
  readonly idempotencyKey: string | null;
  readonly resourceKey: string | null;
  readonly principalId: string | null;
  /** Joins the case to the audit log and to traces. */
  readonly traceId: string | null;
}

/** A reconciliation case: one per dead-lettered call (or per poison dead letter without a call id). */
export interface ReconciliationCase extends DeadLetteredCall {
  readonly caseId: string;
  /** The dead letter that opened it. */
  readonly deadLetterId: string;
  readonly reason: CaseReason;
  readonly state: CaseState;
  /** The dead letter's full context (request, error, origin offsets), JSON fields parsed. No secrets. */
  readonly context: Readonly<Record<string, unknown>>;
  readonly attemptHistory: readonly unknown[];
  readonly lastKnownState: unknown;
  readonly statusChecks: readonly StatusCheckRecord[];
  /** When the next status check is due; set exactly while the case is `open`. */
  readonly nextCheckAtMs: number | null;
  /** Set exactly while the case is resolved. */
  readonly resolution: CaseResolution | null;
  readonly history: readonly CaseTransitionRecord[];
  /** Starts at 1; +1 per transition. For optimistic concurrency. */
  readonly version: number;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

/**
 * A dead letter as the case store takes it. Mirrors the `toolgate.dlq` event (libs/events/contracts.ts
 * DeadLetterEvent), so a decoded event can be passed as is; the `*Json` fields are parsed into the
 * case (text that is not JSON is kept as `{ "unparsed": text }`).
 */
export interface DeadLetterInput extends DeadLetteredCall {
  readonly deadLetterId: string;
  readonly reason: CaseReason;
  readonly requestJson: string | null;
  readonly errorCode: string;
  readonly errorMessage: string;
  readonly attemptsJson: string;
  readonly lastKnownStateJson: string | null;
  readonly originalTopic?: string;
  readonly originalPartition?: number;
  readonly originalOffset?: string;
  readonly originalKey?: string | null;
  readonly rawPayloadBase64?: string | null;
  readonly producerId?: string;
  readonly createdAtMs: number;
}

/** A requested move of a case. */
export interface CaseChange {
  readonly to: CaseState;
  readonly by: CaseActor;
  /** Why; required for every move made by a person and for escalation to `needs_manual`. */
  readonly note: string;
  /** The status check that justifies the move; appended to `statusChecks`. */
  readonly statusCheck?: StatusCheckRecord;
  /** When the case is (or stays) `open`: when to check next. Required to stay open. */
  readonly nextCheckAtMs?: number;
  /**
   * The move is the reconciler's automatic redrive: it re-submits the call itself (an UNRESOLVED
   * call of a tool that forwards its idempotency key; libs/reconcile/redrive-rule.ts). Only the
   * checker may make it, from `open` to `open`; like a person's redrive it starts a new round of
   * checks, and each one counts toward the case's limit of automatic redrives.
   */
  readonly autoRedrive?: true;
}

/** What the caller believes the case is: its state, or its exact version (stricter). */
export type ExpectedCase = CaseState | { readonly state: CaseState; readonly version: number };

export type TransitionResult =
  | { readonly ok: true; readonly case: ReconciliationCase }
  | { readonly ok: false; readonly reason: 'not-found' }
  /** The case is no longer as expected (someone else moved it first); nothing was written. */
  | { readonly ok: false; readonly reason: 'state-changed'; readonly case: ReconciliationCase }
  /** The move breaks a rule of the case model; nothing was written. */
  | {
      readonly ok: false;
      readonly reason: 'not-allowed';
      readonly case: ReconciliationCase;
      readonly detail: string;
    };

export interface CaseFilter {
  readonly state?: CaseState;
  readonly tenant?: string;
  /**
   * Only cases of one of these tenants (an operator's tenant scope); an empty list matches nothing,
   * and a case without a tenant (a poison dead letter that could not be decoded) matches no list.
   * Combines with `tenant` (both must hold).
   */
  readonly tenants?: readonly string[];
  readonly tool?: string;
  /** Only open cases whose next check is due at or before this time, soonest first. */
  readonly dueBeforeMs?: number;
  /**
   * Only cases where this text occurs, ignoring case, in the case id, dead-letter id, call id, trace
   * id, tool or the dead letter's error message (a console's free-text search). At most 200 chars.
   */
  readonly search?: string;
  readonly reason?: CaseReason;
  /** Inclusive lower bound on `createdAtMs`. */
  readonly createdFromMs?: number;
  /** Exclusive upper bound on `createdAtMs`. */
  readonly createdToMs?: number;
  /** Without `dueBeforeMs`: oldest first (`asc`, the default) or newest first (`desc`). */
  readonly order?: 'asc' | 'desc';
  /** Matching cases to skip before the first returned (paging), default 0, at most 1 000 000. */
  readonly offset?: number;
  /** Default 100, at most 10 000. */
  readonly limit?: number;
}

/** The filters {@link CaseStore.countByState} takes: a list's filters without state, order or paging. */
export type CaseCountFilter = Pick<
  CaseFilter,
  'tenant' | 'tenants' | 'tool' | 'search' | 'reason' | 'createdFromMs' | 'createdToMs'
>;

/** How to find one case: its id, the call it is about, or the dead letter that opened it. */
export type CaseRef = string | { readonly callId: string } | { readonly deadLetterId: string };

/**
 * Reconciliation cases (a call without a terminal result has an open case).
 * Times come from the store's clock. Throws when the backing store is unreachable.
 */
export interface CaseStore {
  /**
   * Opens the case for a dead letter, in state `open`, due for a status check now. Idempotent by
   * `callId` (by `deadLetterId` when there is no call id): a redelivered dead letter, or a second
   * dead letter for the same call, returns the existing case unchanged (`created: false`), whatever
   * state it has reached. Exactly one of concurrent openers creates it.
   */
  openFromDeadLetter(dl: DeadLetterInput): Promise<{ created: boolean; case: ReconciliationCase }>;
  get(ref: CaseRef): Promise<ReconciliationCase | undefined>;
  /**
   * Matching cases: soonest due first with `dueBeforeMs`, otherwise by creation time as `order`
   * says (ties by case id), `offset` skipped, at most `limit`.
   */
  list(filter: CaseFilter): Promise<ReconciliationCase[]>;
  /** How many cases match `filter`, per state (every state present, 0 when none). */
  countByState(filter: CaseCountFilter): Promise<Record<CaseState, number>>;
  /**
   * Moves a case if it is still as `expected` and the move is allowed (case-model.ts). Optimistic:
   * of concurrent transitions from the same version exactly one succeeds; the others get
   * `state-changed` and write nothing. Every success appends to `history` and bumps `version`.
   * Expecting only a state does not make a recheck (open → open) exclusive, since the state is the
   * same afterwards: pass `{ state, version }` there so two checkers cannot both record a check.
   */
  transition(caseId: string, change: CaseChange, expected: ExpectedCase): Promise<TransitionResult>;
}
