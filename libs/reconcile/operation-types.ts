import type { CaseFilter, CaseRef, CaseStore, ReconciliationCase } from '../ports/case-store.js';
import type { ToolResolver } from '../pipeline/deps.js';
import type { CaseRequest } from './case-request.js';
import type { DeliveryDeps, DeliveryReport } from './deliver.js';
import type { OriginalCalls } from './original-call.js';
import type { RedrivePlan } from './redrive-rule.js';

/** What the ops operations need. The ops CLI wires the production stores and bus. */
export interface OperationsDeps extends DeliveryDeps {
  readonly cases: CaseStore;
  readonly tools: ToolResolver;
  /** The first wait of a redriven status-check round. Default: the reconciler's default schedule. */
  readonly firstCheckWaitMs?: number;
  /** After a re-submission, how long the executor gets before the first status check. Default 30 s. */
  readonly resubmitGraceMs?: number;
  /** How long an operation keeps retrying an unreachable broker or store. Default 30 s. */
  readonly deliveryTimeoutMs?: number;
  /**
   * A signed principal assertion to re-submit a request with, when the operator passes none (dead
   * letters never keep the original assertion). Undefined: the operator must pass one.
   */
  readonly principalAssertion?: (request: CaseRequest) => Promise<string | undefined>;
  /**
   * Reads original calls back from the calls topic, for re-submissions (cases keep only the
   * allow-listed argument fields). Undefined: only cases whose dead letter kept the full arguments
   * (written before arguments were redacted) can be re-submitted.
   */
  readonly originalCalls?: OriginalCalls;
}

/** A case with what an operator needs to decide about it. */
export interface CaseView {
  readonly case: ReconciliationCase;
  /** The original request (arguments included), when the dead letter carried one. */
  readonly request: CaseRequest | undefined;
  readonly checksThisRound: number;
  /** The operations that apply to the case in its state (a redrive only when it would not be refused). */
  readonly actions: readonly ('resolveByHand' | 'redrive')[];
  /** What a redrive would do, by the rule the redrive itself applies (see redrive-rule.ts). */
  readonly redrive: RedrivePlan;
}

export interface ResolveByHandOptions {
  readonly outcome: 'succeeded' | 'failed';
  /** The operator's id (`ann` or `operator:ann`). */
  readonly by: string;
  /** Why; required. */
  readonly note: string;
  /** For `succeeded`: the call's result as the downstream shows it; checked against the tool's output schema. */
  readonly result?: unknown;
}

export interface RedriveOptions {
  readonly by: string;
  readonly note: string;
  /** For a re-submission: the principal assertion to send the request with. */
  readonly principalAssertion?: string;
}

/** The answer of a state-changing operation. Nothing was written when `ok` is false. */
export type OperationResult =
  | {
      readonly ok: true;
      readonly case: ReconciliationCase;
      readonly delivery: DeliveryReport;
      /** Redrive only: the original request was published to the calls topic again. */
      readonly resubmitted?: boolean;
    }
  | { readonly ok: false; readonly reason: 'not-found'; readonly detail: string }
  | {
      readonly ok: false;
      readonly reason:
        'state-changed' | 'not-allowed' | 'invalid-result' | 'not-redrivable' | 'needs-assertion';
      readonly detail: string;
      readonly case: ReconciliationCase;
    };

/** The operations the ops CLI wraps. */
export interface Operations {
  /** Cases matching the filter (see CaseFilter: soonest due first with dueBeforeMs, else oldest first). */
  listCases(filter: CaseFilter): Promise<ReconciliationCase[]>;
  /** One case by id, call id or dead-letter id, with its request and the actions open to it. */
  showCase(ref: CaseRef): Promise<CaseView | undefined>;
  /**
   * A person's verdict: the case moves to resolved_succeeded / resolved_failed (from open or
   * needs_manual), the verdict is recorded in the call's idempotency record whatever the case's
   * reason (an UNRESOLVED record is replaced; a free key — an EXHAUSTED or POISON call — is claimed
   * before the case moves and completed with it), and an audit record and a superseding result
   * (source 'operator') go out. After it, the call never runs again: a re-run of the turn or a
   * queued re-submission is answered DUPLICATE with the verdict. Refused, writing nothing, while an
   * executor holds the call's key (it is running, e.g. a re-submission) or when the case moved. A result given for `succeeded` must pass
   * the tool's output schema and is redacted by it; `failed` takes none.
   */
  resolveByHand(caseId: string, options: ResolveByHandOptions): Promise<OperationResult>;
  /**
   * Another go for a needs_manual or resolved_failed case, audited, as the redrive rule decides
   * (redrive-rule.ts; `showCase` reports the same plan): another round of status checks (UNRESOLVED,
   * tool with a status check), a re-submission (POISON / EXHAUSTED with the request available;
   * UNRESOLVED of a read-only or forwards-key tool, whose UNRESOLVED idempotency answer is retired
   * after the case moves so the executor runs it), or a refusal with the reason that writes nothing
   * (e.g. UNRESOLVED of a retry-safety `none` tool). A re-submission publishes the original request
   * to the calls topic again with the same callId and idempotency key (the executor's idempotency
   * keeps it to one effect), its full arguments read back from the calls topic (`originalCalls`), and
   * a principal assertion given by the operator (or `principalAssertion`). The case reopens BEFORE
   * anything is written to the idempotency store or published (from the version read, so of a
   * redrive and a resolution racing on one case exactly one moves it); its checks start after
   * `resubmitGraceMs`. A re-submission that cannot be retired or published moves the case back to
   * needs_manual. The audit record has the operator as principal (see caseAuditEvent). Carried out
   * by redrive.ts, as the reconciler's automatic redrives are.
   */
  redrive(caseId: string, options: RedriveOptions): Promise<OperationResult>;
}
