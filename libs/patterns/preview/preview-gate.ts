import type { Principal } from '../../core/types.js';
import type { Clock } from '../../core/clock.js';
import type {
  ApprovalOrigin,
  ApprovalRequest,
  ApprovalRule,
  ApprovalStore,
} from '../../ports/approval-store.js';
import type { SingleUseStore } from '../../ports/single-use-store.js';
import { canonicalActor } from '../approval/approval-rules.js';
import { issuePreviewToken, type IssuedPreviewToken } from './issue-preview-token.js';
import { DEFAULT_PREVIEW_TTL_MS, argumentsHash, type PreviewClaims } from './preview-claims.js';
import type { PreviewKey } from './preview-key.js';
import type { PreviewRefusal } from './preview-refusal.js';
import { verifyPreviewToken } from './verify-preview-token.js';

/** What a {@link PreviewGate} signs with, records in, and reads time from. */
export interface PreviewGateOptions {
  readonly key: PreviewKey;
  readonly store: SingleUseStore;
  /**
   * Where approval requests are recorded and decided. Required to confirm a token that requires
   * approval (such a confirm throws without one); tokens without approval never touch it.
   */
  readonly approvals?: ApprovalStore;
  readonly clock: Clock;
  /** Token lifetime; default {@link DEFAULT_PREVIEW_TTL_MS} (10 minutes). */
  readonly ttlMs?: number;
  /**
   * How much longer than a token's remaining life its used mark is kept, covering clock differences
   * between executors (a token must never become usable again while any executor still accepts it).
   * Default 60 s.
   */
  readonly retentionMarginMs?: number;
}

/** What the preview step computed and wants the confirm bound to. */
export interface PreviewRequest {
  /** The verified principal (never from arguments). */
  readonly principal: Principal;
  /** The confirm tool's name. */
  readonly tool: string;
  /** The arguments the confirm will carry, without the token; hashed canonically. */
  readonly arguments: unknown;
  readonly resourceKey: string;
  readonly resourceVersion: string;
  readonly policyVersion: string;
  /** What the preview shows (lines, totals): hashed, so the confirm executes exactly that. */
  readonly preview?: unknown;
  /** Make the token unusable until a person approves it. Default false (true when `approvalRule` is given). */
  readonly requireApproval?: boolean;
  /** The rule requiring approval: its name, its reason for the approver, and how many must approve. */
  readonly approvalRule?: ApprovalRule;
}

/** The rule recorded for a token that requires approval without naming one. */
export const DEFAULT_APPROVAL_RULE: ApprovalRule = {
  rule: 'approval-required',
  reason: "this action needs a person's approval",
  approvers: 1,
};

/** The state the confirm would act on now, read after the token is accepted. */
export interface CurrentState {
  readonly resourceVersion: string;
  /** Recomputed preview; compared with the previewed one when the token bound one. */
  readonly preview?: unknown;
}

/** A confirm call, described from its verified context and its own arguments. */
export interface ConfirmRequest {
  readonly token: string;
  readonly principal: Principal;
  readonly tool: string;
  /** The confirm's arguments without the token. */
  readonly arguments: unknown;
  readonly resourceKey: string;
  /** The policy version in force now. */
  readonly policyVersion: string;
  /**
   * The logical call redeeming the token (its idempotency key): a retry of the same call passes the
   * single-use check again, any other call is refused as a replay.
   */
  readonly holder: string;
  /** The confirm tool's version, recorded with an approval request. */
  readonly toolVersion?: string;
  /** The confirming call, recorded with an approval request so a decision's audit joins its chain. */
  readonly origin?: ApprovalOrigin;
  /** Reads the resource's current version (and the recomputed preview). */
  readonly current: () => Promise<CurrentState>;
}

/** The token was accepted and is now used up; or why not. */
export type Confirmation =
  | { readonly ok: true; readonly claims: PreviewClaims; readonly approval?: ApprovalRequest }
  | { readonly ok: false; readonly refusal: PreviewRefusal };

/**
 * Preview/confirm with signed, single-use, time-boxed tokens and an optional human approval step.
 * The same token is both the approval gate and the idempotency mechanism: a replayed
 * confirm finds its token used and is refused, not re-executed.
 */
export class PreviewGate {
  readonly #opts: PreviewGateOptions;

  constructor(options: PreviewGateOptions) {
    this.#opts = options;
  }

  /** The token lifetime this gate issues. */
  get ttlMs(): number {
    return this.#opts.ttlMs ?? DEFAULT_PREVIEW_TTL_MS;
  }

  /**
   * Signs a token binding `request` (see `issuePreviewToken`). No side effect: nothing is stored,
   * so previewing is read-only and may be repeated freely (each preview gets its own token).
   */
  issue(request: PreviewRequest): Promise<IssuedPreviewToken> {
    return issuePreviewToken(
      {
        ...boundCall(request),
        resourceVersion: request.resourceVersion,
        policyVersion: request.policyVersion,
        ...(request.preview === undefined ? {} : { previewHash: argumentsHash(request.preview) }),
        requiresApproval: request.requireApproval === true || request.approvalRule !== undefined,
        ...(request.approvalRule === undefined ? {} : { approvalRule: request.approvalRule }),
      },
      this.#opts.key,
      { nowMs: this.#opts.clock.now(), ttlMs: this.ttlMs },
    );
  }

  /**
   * Redeems a token for one confirm call. In order, stopping at the first refusal:
   * 1. {@link verifyPreviewToken}: signature over the whole payload, expiry, tool, principal,
   *    arguments hash, resource key, policy version — pure, nothing used up;
   * 2. approval, when the token requires it: the gate records the approval request itself (idempotent
   *    by the token id; from the verified claims and this confirm's arguments, whose hash the token
   *    just matched) and reads the decision from it: pending → `awaiting-approval` (the token stays
   *    usable, so the same call can be repeated after approval); rejected → `rejected`; approved →
   *    redeemed for `holder` by compare-and-set (`already-used` when another call redeemed it; a
   *    retry by the same holder passes); an approval by the requester or the user it acts for →
   *    `self-approved` (the store refuses those already; checked again here);
   * 3. the single-use mark, atomically in the store (`already-used` for any call but `holder`);
   * 4. `current()`: the resource version and recomputed preview must equal the previewed ones
   *    (`resource-changed` / `preview-changed`). The token is already used by then: a stale preview
   *    is never good again, and the model must preview anew either way.
   *
   * Only an `ok` answer may be followed by the effect. Throws only what the store or `current()`
   * throws (unreachable store, failing downstream): callers fail closed.
   */
  async confirm(request: ConfirmRequest): Promise<Confirmation> {
    const verified = await verifyPreviewToken(
      request.token,
      {
        ...boundCall(request),
        policyVersion: request.policyVersion,
      },
      this.#opts.key,
      this.#opts.clock.now(),
    );
    if (!verified.ok) return verified;
    const { claims } = verified;

    let approval: ApprovalRequest | undefined;
    if (claims.requiresApproval) {
      const decided = await this.#approval(claims, request);
      if (!decided.ok) return decided;
      approval = decided.approval;
    }

    const remainingMs = Math.max(1, claims.expiresAtMs - this.#opts.clock.now());
    const used = await this.#opts.store.consume(
      claims.jti,
      remainingMs + (this.#opts.retentionMarginMs ?? 60_000),
      request.holder,
    );
    if (used === 'already-used') return refuse({ reason: 'already-used', jti: claims.jti });

    const current = await request.current();
    if (current.resourceVersion !== claims.resourceVersion) {
      return refuse({
        reason: 'resource-changed',
        previewedVersion: claims.resourceVersion,
        currentVersion: current.resourceVersion,
      });
    }
    if (
      claims.previewHash !== undefined &&
      (current.preview === undefined || argumentsHash(current.preview) !== claims.previewHash)
    ) {
      return refuse({ reason: 'preview-changed' });
    }
    return { ok: true, claims, ...(approval === undefined ? {} : { approval }) };
  }

  async #approval(
    claims: PreviewClaims,
    request: ConfirmRequest,
  ): Promise<
    | { readonly ok: true; readonly approval: ApprovalRequest }
    | { readonly ok: false; readonly refusal: PreviewRefusal }
  > {
    const store = this.#opts.approvals;
    if (store === undefined) throw new Error('this preview gate has no approval store');
    const { request: recorded } = await store.create({
      id: claims.jti,
      tenant: claims.tenant,
      tool: claims.tool,
      toolVersion: request.toolVersion ?? '',
      arguments: argumentsRecord(request.arguments),
      argumentsHash: claims.argumentsHash,
      requester: claims.principalId,
      ...(claims.onBehalfOf === undefined ? {} : { onBehalfOf: claims.onBehalfOf }),
      rule: claims.approvalRule ?? DEFAULT_APPROVAL_RULE,
      expiresAtMs: claims.expiresAtMs,
      ...(request.origin === undefined ? {} : { origin: request.origin }),
    });
    const awaiting = refuse({
      reason: 'awaiting-approval',
      jti: claims.jti,
      expiresAtMs: claims.expiresAtMs,
    });
    // The id is the signed token's: a request under it that binds anything else was not made by this gate.
    if (
      recorded.argumentsHash !== claims.argumentsHash ||
      recorded.requester !== claims.principalId ||
      recorded.tenant !== claims.tenant ||
      recorded.onBehalfOf !== claims.onBehalfOf
    ) {
      return refuse({ reason: 'wrong-principal' });
    }
    if (recorded.state === 'pending') return awaiting;
    if (recorded.state === 'rejected') return refuse({ reason: 'rejected', jti: claims.jti });
    if (recorded.state === 'expired') return refuse({ reason: 'expired', expiredAtMs: claims.expiresAtMs });
    const chain = [claims.principalId, claims.onBehalfOf]
      .filter((id) => id !== undefined)
      .map(canonicalActor);
    if (recorded.approvals.some((a) => chain.includes(canonicalActor(a.by)))) {
      return refuse({ reason: 'self-approved', jti: claims.jti });
    }
    const redeemed = await store.redeem(claims.jti, request.holder);
    if (redeemed.ok) return { ok: true, approval: redeemed.request };
    switch (redeemed.refusal) {
      case 'redeemed-by-another-call':
        return refuse({ reason: 'already-used', jti: claims.jti });
      case 'expired':
        return refuse({ reason: 'expired', expiredAtMs: claims.expiresAtMs });
      default:
        return awaiting;
    }
  }
}

/** The confirm's arguments as the object an approval request records (a non-object is wrapped). */
function argumentsRecord(args: unknown): Readonly<Record<string, unknown>> {
  return typeof args === 'object' && args !== null && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : { value: args };
}

/**
 * What a token binds about the call, the same at issue and at confirm: who (principal, tenant, the
 * user acted for), which tool, the arguments' hash and the resource.
 */
function boundCall(request: Pick<PreviewRequest, 'principal' | 'tool' | 'arguments' | 'resourceKey'>) {
  const p = request.principal;
  return {
    principalId: p.id,
    tenant: p.tenant,
    ...(p.onBehalfOf === undefined ? {} : { onBehalfOf: p.onBehalfOf }),
    tool: request.tool,
    argumentsHash: argumentsHash(request.arguments),
    resourceKey: request.resourceKey,
  };
}

function refuse(refusal: PreviewRefusal): { readonly ok: false; readonly refusal: PreviewRefusal } {
  return { ok: false, refusal };
}
