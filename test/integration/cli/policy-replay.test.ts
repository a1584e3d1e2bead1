import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import type { AuditRecord } from '../../../libs/core/audit-record.js';
import type { Principal } from '../../../libs/core/types.js';
import type { ReplayReport, RuleChanges } from '../../../libs/policy/replay.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import { STORE_POLICY_CEDAR } from '../../../services/catalog/index.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import {
  ana,
  manager,
  storeHarness,
  supportDesk,
  type StoreHarness,
} from '../../unit/catalog/store-harness.js';
import { envelope } from '../../unit/audit/fixtures.js';
import { cli } from '../../unit/cli/capture.js';
import { databaseUrlFor } from './cli-env.js';

/**
 * `toolgate policy replay` over a recorded week of the store's calls (support, a customer and a
 * manager refunding; support moving stock), generated through the real guard pipeline with the
 * store policy and stored in a Postgres audit log. A candidate lowers the support refund limit, raises
 * the self-service one and tightens the stock limit; the report must list exactly the decisions a
 * brute-force re-evaluation of the recorded facts flips, and execute nothing.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The candidate: support $50 → $40, self-service $200 → $250, stock ±20 → ±15 a day. */
const CANDIDATE = STORE_POLICY_CEDAR.replace('decimal("50.0")', 'decimal("40.0")')
  .replace('decimal("200.0")', 'decimal("250.0")')
  .replace('decimal("20.0")', 'decimal("15.0")')
  .replace('decimal("-20.0")', 'decimal("-15.0")');
const LIMITS = { support: 40, self: 250, stock: 15 };
const OLD = { support: 50, self: 200, stock: 20 };

let db: TestSchema;
let h: StoreHarness;
let dir: string;
const records: AuditRecord[] = [];

type Plan = readonly [principal: Principal, tool: string, args: Record<string, unknown>];

function dayPlan(day: number): Plan[] {
  const support = [10, 15, 5, 12.5, 20, 7.25][day % 6]!;
  const self = [60, 25, 45, 80][day % 4]!;
  const delta = [5, -3, 8, 6, -7, 9][day % 6]!;
  return [
    [supportDesk, 'issue_refund', { order_id: 'O-9001', amount: support, reason: 'damaged' }],
    [supportDesk, 'issue_refund', { order_id: 'O-5512', amount: support / 2, reason: 'late_delivery' }],
    [ana, 'issue_refund', { order_id: 'O-9001', amount: self, reason: 'damaged' }],
    [manager, 'issue_refund', { order_id: 'O-7788', amount: 1.5, reason: 'other' }],
    [supportDesk, 'update_inventory', { sku: 'SKU-7', delta, reason: 'recount' }],
    [supportDesk, 'update_inventory', { sku: 'SKU-7', delta: delta * 2, reason: 'recount' }],
  ];
}

beforeAll(async () => {
  db = await createTestSchema('cli_replay');
  await migrate(db.pool);
  h = storeHarness();
  const start = Date.parse('2026-11-30T00:00:00.000Z');
  await h.clock.advance(start - h.clock.now());
  for (let day = 0; day < 7; day++) {
    for (const hour of [9, 13, 17]) {
      await h.clock.advance(start + day * DAY + hour * HOUR - h.clock.now());
      for (const [principal, tool, args] of dayPlan(day)) {
        const { audit } = await h.call(tool, args, principal);
        records.push(audit);
      }
    }
  }
  const store = new PostgresAuditStore(db.pool);
  await store.append(records.map((r) => envelope(r)));
  dir = await mkdtemp(join(tmpdir(), 'toolgate-replay-'));
  await writeFile(join(dir, 'refunds-40.cedar'), CANDIDATE);
}, 120_000);

afterAll(async () => {
  await h?.close();
  await db?.drop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** As the README writes it: `toolgate policy replay --policy ./refunds-40.cedar --from 2026-11-30`. */
const replay = (extra: string[] = []) =>
  cli(['policy', 'replay', '--policy', './refunds-40.cedar', '--from', '2026-11-30', ...extra], {
    env: { DATABASE_URL: databaseUrlFor(db.schema) },
    cwd: dir,
    catalog: h.catalog,
  });

/** The candidate's verdict on one recorded call, by hand from the recorded facts and roles. */
function bruteForce(record: AuditRecord, limits: typeof LIMITS): string | undefined {
  const facts = record.policy?.facts ?? {};
  const roles = record.policy?.roles ?? [];
  const fact = (name: string) => Number(facts[name]);
  if (record.tool === 'issue_refund') {
    if (roles.includes('support') && fact('refunded_by_support_30d') > limits.support)
      return 'refund-support-limit';
    if (roles.includes('customer') && fact('refunded_self_service_30d') > limits.self) {
      return 'refund-self-service-limit';
    }
    return undefined;
  }
  if (record.tool === 'update_inventory' && roles.includes('support')) {
    const change = fact('stock_change_by_support_24h');
    if (change > limits.stock) return 'inventory-support-add-limit';
    if (change < -limits.stock) return 'inventory-support-remove-limit';
  }
  return undefined;
}

function tally(pairs: readonly (readonly [string, string])[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [, rule] of pairs) out[rule] = (out[rule] ?? 0) + 1;
  return out;
}

const counts = (changes: readonly RuleChanges[]) =>
  Object.fromEntries(changes.map((c) => [c.ruleId, c.count]));

describe('toolgate policy replay', () => {
  it('reports exactly the decisions the changed limits flip, matching a brute-force re-evaluation', async () => {
    const judged = records.filter((r) => r.decisions.some((d) => d.stage === 'business-rules'));
    // The generated week exercises both directions, or the comparison below would prove little.
    const recordedRefusals = judged.filter((r) => r.outcome === 'POLICY_VIOLATION');
    expect(recordedRefusals.length).toBeGreaterThan(5);
    // The recorded decisions are the active policy's, re-derived the same way.
    for (const r of judged) {
      expect(r.policy?.ruleId, r.callId).toBe(bruteForce(r, OLD));
    }

    const newlyRefused: [string, string][] = [];
    const newlyAllowed: [string, string][] = [];
    const otherRule: [string, string][] = [];
    let unchanged = 0;
    for (const r of judged) {
      const before = bruteForce(r, OLD);
      const after = bruteForce(r, LIMITS);
      if (before === after) unchanged += 1;
      else if (before === undefined) newlyRefused.push([r.callId, after!]);
      else if (after === undefined) newlyAllowed.push([r.callId, before]);
      else otherRule.push([r.callId, after]);
    }
    expect(newlyRefused.length).toBeGreaterThan(0);
    expect(newlyAllowed.length).toBeGreaterThan(0);

    const run = await replay(['--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(EXIT.ok);
    const report = run.json<ReplayReport>();
    expect(report.candidateVersion).toBe('candidate:refunds-40.cedar');
    expect(report.records).toBe(records.length);
    expect(report.judged).toBe(judged.length);
    expect(report.unchanged).toBe(unchanged);
    expect(counts(report.newlyRefused)).toEqual(tally(newlyRefused));
    expect(counts(report.newlyAllowed)).toEqual(tally(newlyAllowed));
    expect(counts(report.refusedByAnotherRule)).toEqual(tally(otherRule));
    expect(report.notEvaluable).toEqual([]);
    const flipped = new Set(newlyRefused.map(([id]) => id));
    for (const change of report.newlyRefused) {
      for (const example of change.examples) expect(flipped.has(example.callId)).toBe(true);
    }
  });

  it('executes nothing: the payment ledger and stock are as the recorded week left them', async () => {
    const ledgerBefore = await h.downstreams.payments.ledger({ tenant: 't1' });
    const stockBefore = await h.downstreams.inventory.getStock('t1', 'SKU-7');
    expect((await replay()).code).toBe(EXIT.ok);
    expect(await h.downstreams.payments.ledger({ tenant: 't1' })).toEqual(ledgerBefore);
    expect(await h.downstreams.inventory.getStock('t1', 'SKU-7')).toEqual(stockBefore);
  });

  it('prints the changes per rule for a person, and narrows to a window', async () => {
    const text = await replay();
    expect(text.stdout).toContain('Allowed then, refused by the candidate');
    expect(text.stdout).toContain('refund-support-limit');
    const lastDay = await cli(
      ['policy', 'replay', '--policy', './refunds-40.cedar', '--from', '2026-12-06', '--json'],
      { env: { DATABASE_URL: databaseUrlFor(db.schema) }, cwd: dir, catalog: h.catalog },
    );
    const report = lastDay.json<ReplayReport>();
    expect(report.records).toBe(records.filter((r) => r.finishedAtMs >= Date.parse('2026-12-06')).length);
  });

  it('refuses a candidate that does not fit the tools, naming the line', async () => {
    await writeFile(
      join(dir, 'typo.cedar'),
      CANDIDATE.replace('context.facts.refunded_by_support_30d', 'context.facts.refunded_by_suport_30d'),
    );
    const run = await cli(['policy', 'replay', '--policy', 'typo.cedar'], {
      env: { DATABASE_URL: databaseUrlFor(db.schema) },
      cwd: dir,
      catalog: h.catalog,
    });
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/line \d+, column \d+/);
    expect(run.stderr).toContain('refunded_by_suport_30d');
  });
});
