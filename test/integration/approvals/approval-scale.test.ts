import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresApprovalStore } from '../../../libs/adapters/postgres/approval-store.js';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import { PostgresSingleUseStore } from '../../../libs/adapters/postgres/single-use-store.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { Principal } from '../../../libs/core/types.js';
import { PreviewGate, type Confirmation } from '../../../libs/patterns/preview/index.js';
import type { ApprovalRequest } from '../../../libs/ports/approval-store.js';
import { DATABASE_URL } from '../../helpers/env.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { agentPrincipal } from '../../helpers/principals.js';
import { envelope, policyRefusedRecord } from '../../unit/audit/fixtures.js';

/**
 * Approval requests at scale on real Postgres: 1,000 confirms across 10 tenants record their requests
 * concurrently while 10,000 policy refusals (each echoing the gate's own words) are appended to the
 * audit log; then every request is found exactly once, in its tenant only, by paging; 100 concurrent
 * decisions on one request leave exactly one; concurrent redemptions by different calls let exactly
 * one through. Figures are printed.
 */
const TENANTS = Array.from({ length: 10 }, (_, i) => `tenant-${i}`);
const REQUESTS = 1_000;
const REFUSALS = 10_000;
const RULE = {
  rule: 'purchase-order-total',
  reason: "orders above $1,000 need a manager's approval",
  approvers: 1,
};

let db: TestSchema;
let second: pg.Pool;
let gate: PreviewGate;
let approvals: PostgresApprovalStore;
let peer: PostgresApprovalStore;
let audit: PostgresAuditStore;
const made = new Map<string, { principal: Principal; token: string; args: Record<string, unknown> }>();

const log = (line: string) => process.stdout.write(`[approval-scale] ${line}\n`);
const since = (t0: number) => `${(performance.now() - t0).toFixed(0)} ms`;

beforeAll(async () => {
  db = await createTestSchema('approval_scale');
  await migrate(db.pool);
  second = new pg.Pool({ connectionString: DATABASE_URL, max: 10, options: `-c search_path="${db.schema}"` });
  approvals = new PostgresApprovalStore(db.pool, systemClock);
  peer = new PostgresApprovalStore(second, systemClock);
  audit = new PostgresAuditStore(db.pool);
  gate = new PreviewGate({
    key: { alg: 'HS256', secret: randomBytes(32) },
    store: new PostgresSingleUseStore(db.pool),
    approvals,
    clock: systemClock,
  });
}, 60_000);

afterAll(async () => {
  await second?.end();
  await db?.drop();
});

function principalOf(i: number): Principal {
  const tenant = TENANTS[i % TENANTS.length]!;
  return agentPrincipal(`agent:${tenant}`, `user-${i % 7}`, ['warehouse'], [], { tenant });
}

const confirmOf = (token: string, principal: Principal, args: Record<string, unknown>, holder: string) =>
  gate.confirm({
    token,
    principal,
    tool: 'create_purchase_order',
    arguments: args,
    resourceKey: `${principal.tenant}:inventory:${String(args.sku)}`,
    policyVersion: 'p-1',
    holder,
    current: () => Promise.resolve({ resourceVersion: 'v-1' }),
  });

/** A fresh request of its own: previewed and confirmed once by principal number `i`, so the gate recorded it. */
async function waitingRequest(i: number) {
  const principal = principalOf(i);
  const args = { sku: `SKU-X${i}-${randomBytes(4).toString('hex')}`, quantity: 3, supplier_id: 'SUP-1' };
  const { token, claims } = await gate.issue({
    principal,
    tool: 'create_purchase_order',
    arguments: args,
    resourceKey: `${principal.tenant}:inventory:${args.sku}`,
    resourceVersion: 'v-1',
    policyVersion: 'p-1',
    approvalRule: RULE,
  });
  const asked = await confirmOf(token, principal, args, `call-${claims.jti}`);
  expect(!asked.ok && asked.refusal.reason).toBe('awaiting-approval');
  return { id: claims.jti, principal, token, args };
}

describe('approval requests at scale on real Postgres', () => {
  it('1,000 concurrent requests across 10 tenants amid 10,000 refusals: each listed exactly once, in its tenant only', async () => {
    const t0 = performance.now();
    const issued = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const principal = principalOf(i);
        const args = { sku: `SKU-${i}`, quantity: 1 + (i % 50), supplier_id: 'SUP-1' };
        const { token, claims } = await gate.issue({
          principal,
          tool: 'create_purchase_order',
          arguments: args,
          resourceKey: `${principal.tenant}:inventory:SKU-${i}`,
          resourceVersion: 'v-1',
          policyVersion: 'p-1',
          approvalRule: RULE,
        });
        made.set(claims.jti, { principal, token, args });
        return claims.jti;
      }),
    );
    const ids = [...issued];
    const refusals = async (from: number, to: number) => {
      for (let i = from; i < to; i += 500) {
        await audit.append(
          Array.from({ length: Math.min(500, to - i) }, (_, k) => {
            const jti = ids[(i + k) % ids.length]!;
            const record = policyRefusedRecord(
              `a person must approve preview ${jti} before it can be confirmed (the preview expires at ${new Date(Date.now() + 600_000).toISOString()})`,
              { tenant: TENANTS[(i + k) % TENANTS.length]!, principalId: 'agent:forger' },
            );
            return envelope(record, { recordedAtMs: Date.now() });
          }),
        );
      }
    };
    const confirmAll = (from: number, to: number) =>
      Promise.all(
        ids.slice(from, to).map((id) => {
          const m = made.get(id)!;
          return confirmOf(m.token, m.principal, m.args, `call-${id}`);
        }),
      );
    const tConfirm = performance.now();
    const answers: Confirmation[] = [];
    const [first] = await Promise.all([confirmAll(0, REQUESTS / 2), refusals(0, REFUSALS / 2)]);
    answers.push(...first);
    const [rest] = await Promise.all([confirmAll(REQUESTS / 2, REQUESTS), refusals(REFUSALS / 2, REFUSALS)]);
    answers.push(...rest);
    log(
      `${REQUESTS} confirms recorded their requests while ${REFUSALS} refusals were appended: ${since(tConfirm)}`,
    );
    expect(answers.every((a) => !a.ok && a.refusal.reason === 'awaiting-approval')).toBe(true);
    expect((await audit.query({ outcome: 'POLICY_VIOLATION', limit: 10_000 })).length).toBe(REFUSALS);

    const tList = performance.now();
    const seen = new Map<string, string>();
    let pages = 0;
    for (const tenant of TENANTS) {
      let after: string | undefined;
      do {
        const page = await peer.list({
          scope: { all: false, tenants: [tenant] },
          state: 'pending',
          limit: 37,
          ...(after === undefined ? {} : { after }),
        });
        pages += 1;
        for (const r of page.items) {
          expect(r.tenant).toBe(tenant);
          expect(seen.has(r.id)).toBe(false);
          seen.set(r.id, r.tenant);
        }
        after = page.next;
      } while (after !== undefined);
      expect(await peer.counts({ all: false, tenants: [tenant] })).toEqual({
        pending: REQUESTS / TENANTS.length,
        approved: 0,
        rejected: 0,
        expired: 0,
        redeemed: 0,
      });
    }
    log(
      `paged through ${seen.size} requests of ${TENANTS.length} tenants in ${pages} pages: ${since(tList)}`,
    );
    expect(seen.size).toBe(REQUESTS);
    for (const id of ids) expect(seen.get(id)).toBe(made.get(id)!.principal.tenant);
    const everything: ApprovalRequest[] = [];
    let after: string | undefined;
    do {
      const page = await approvals.list({
        scope: { all: true },
        limit: 500,
        ...(after === undefined ? {} : { after }),
      });
      everything.push(...page.items);
      after = page.next;
    } while (after !== undefined);
    expect(new Set(everything.map((r) => r.id)).size).toBe(REQUESTS);
    expect(everything.every((r) => r.requester === `agent:${r.tenant}`)).toBe(true);
    log(`total ${since(t0)}`);
  }, 300_000);

  it('100 concurrent approvals and rejections of one request end in exactly one decision, every round', async () => {
    const rounds = 8;
    const t0 = performance.now();
    for (let round = 0; round < rounds; round++) {
      const { id } = await waitingRequest(round);
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) => {
          const store = i % 2 === 0 ? approvals : peer;
          return i % 4 === 1
            ? store.reject(id, `person-${i}`, 'no')
            : store.approve(id, `person-${i}`, 'yes');
        }),
      );
      expect(answers.filter((a) => a.ok)).toHaveLength(1);
      const events = await approvals.events(id);
      expect(events).toHaveLength(2);
      expect(['approved', 'rejected']).toContain((await approvals.get(id))?.state);
    }
    log(`${rounds} rounds of 100 concurrent decisions on one request, one decision each: ${since(t0)}`);
  }, 120_000);

  it('a redeemed approval never redeems twice: of 50 concurrent confirms by different calls exactly one passes', async () => {
    const rounds = 6;
    const t0 = performance.now();
    let effects = 0;
    for (let round = 0; round < rounds; round++) {
      const m = await waitingRequest(round);
      const id = m.id;
      expect((await approvals.approve(id, 'operator:mia', 'ok')).ok).toBe(true);
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          gate
            .confirm({
              token: m.token,
              principal: m.principal,
              tool: 'create_purchase_order',
              arguments: m.args,
              resourceKey: `${m.principal.tenant}:inventory:${String(m.args.sku)}`,
              policyVersion: 'p-1',
              holder: `call-${id}-${i}`,
              current: () => {
                effects += 1;
                return Promise.resolve({ resourceVersion: 'v-1' });
              },
            })
            .then((c) => c),
        ),
      );
      expect(answers.filter((a) => a.ok)).toHaveLength(1);
      expect(answers.filter((a) => !a.ok).every((a) => !a.ok && a.refusal.reason === 'already-used')).toBe(
        true,
      );
      const redeemed = await approvals.get(id);
      expect(redeemed?.state).toBe('redeemed');
      // The store alone, too: another call redeeming afterwards is refused.
      expect(await peer.redeem(id, 'call-late')).toMatchObject({
        ok: false,
        refusal: 'redeemed-by-another-call',
      });
    }
    expect(effects).toBe(rounds);
    log(
      `${rounds} approvals × 50 concurrent confirms by different calls: ${effects} passed in all, ${since(t0)}`,
    );
  }, 120_000);
});
