import type { Clock } from '../../core/clock.js';
import { inTenantScope, type TenantScope } from '../../core/tenant-scope.js';
import {
  approvalTransition,
  asOf,
  creationEvent,
  decodeApprovalCursor,
  encodeApprovalCursor,
  newApprovalRequest,
  pageSizeOf,
  type ApprovalAction,
} from '../../patterns/approval/approval-rules.js';
import {
  APPROVAL_STATES,
  type ApprovalChange,
  type ApprovalDraft,
  type ApprovalEvent,
  type ApprovalListing,
  type ApprovalPage,
  type ApprovalRequest,
  type ApprovalState,
  type ApprovalStore,
} from '../../ports/approval-store.js';
import { checkKey } from './argument-checks.js';

/**
 * Approval requests in process memory, timed by `clock` (embedded mode, one process, tests). Each
 * method runs synchronously to completion before its promise settles, so a transition's read, judge
 * and write never interleave with another's. Requests are kept for the life of the process. See
 * {@link ApprovalStore} for the contract.
 */
export class MemoryApprovalStore implements ApprovalStore {
  readonly #requests = new Map<string, ApprovalRequest>();
  readonly #events = new Map<string, ApprovalEvent[]>();

  constructor(private readonly clock: Clock) {}

  async create(draft: ApprovalDraft): Promise<{ request: ApprovalRequest; created: boolean }> {
    const existing = this.#requests.get(draft.id);
    if (existing !== undefined) return { request: asOf(existing, this.clock.now()), created: false };
    const request = newApprovalRequest(draft, this.clock.now());
    this.#requests.set(request.id, request);
    this.#events.set(request.id, [creationEvent(request)]);
    return { request, created: true };
  }

  async get(id: string): Promise<ApprovalRequest | undefined> {
    checkKey('id', id);
    const found = this.#requests.get(id);
    return found === undefined ? undefined : asOf(found, this.clock.now());
  }

  approve(id: string, by: string, note: string): Promise<ApprovalChange> {
    return Promise.resolve(this.#apply(id, { kind: 'approve', by, note }));
  }

  reject(id: string, by: string, note: string): Promise<ApprovalChange> {
    return Promise.resolve(this.#apply(id, { kind: 'reject', by, note }));
  }

  redeem(id: string, holder: string): Promise<ApprovalChange> {
    return Promise.resolve(this.#apply(id, { kind: 'redeem', holder }));
  }

  async list(listing: ApprovalListing): Promise<ApprovalPage> {
    const size = pageSizeOf(listing.limit);
    const after = listing.after === undefined ? undefined : decodeApprovalCursor(listing.after);
    const now = this.clock.now();
    const matching = [...this.#requests.values()]
      .map((r) => asOf(r, now))
      .filter((r) => inTenantScope(listing.scope, r.tenant))
      .filter((r) => listing.state === undefined || r.state === listing.state)
      .filter(
        (r) =>
          after === undefined ||
          r.createdAtMs > after.createdAtMs ||
          (r.createdAtMs === after.createdAtMs && r.id > after.id),
      )
      .sort((a, b) => a.createdAtMs - b.createdAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const items = matching.slice(0, size);
    const last = items.at(-1);
    return matching.length > size && last !== undefined
      ? { items, next: encodeApprovalCursor({ createdAtMs: last.createdAtMs, id: last.id }) }
      : { items };
  }

  async counts(scope: TenantScope): Promise<Record<ApprovalState, number>> {
    const now = this.clock.now();
    const counts = Object.fromEntries(APPROVAL_STATES.map((s) => [s, 0])) as Record<ApprovalState, number>;
    for (const r of this.#requests.values()) {
      if (inTenantScope(scope, r.tenant)) counts[asOf(r, now).state] += 1;
    }
    return counts;
  }

  async events(id: string): Promise<readonly ApprovalEvent[]> {
    return [...(this.#events.get(id) ?? [])];
  }

  #apply(id: string, action: ApprovalAction): ApprovalChange {
    checkKey('id', id);
    const request = this.#requests.get(id);
    if (request === undefined) return { ok: false, refusal: 'unknown' };
    const now = this.clock.now();
    const step = approvalTransition(request, action, now);
    if (!step.ok) return { ok: false, refusal: step.refusal, request: asOf(request, now) };
    if (step.event === undefined) return { ok: true, request: step.next };
    this.#requests.set(id, step.next);
    this.#events.get(id)?.push(step.event);
    return { ok: true, request: step.next, event: step.event };
  }
}
