import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type pg from 'pg';
import { RedisFactStore } from '../../../libs/adapters/redis/index.js';
import type { Principal } from '../../../libs/core/types.js';
import { createPolicyEngine } from '../../../libs/policy/policy-engine.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { ToolRegistry } from '../../../libs/registry/tool-registry.js';
import { createExecutorStack, PRINCIPAL, type ExecutorStack } from './executor-stack.js';

/**
 * A cumulative limit on real Kafka, Redis and Postgres: support may refund at most $50 per order in
 * total, however the refunds are split. Many refunds per order are published at once to two
 * executors; the effects the tool really made (rows in Postgres) are counted.
 */

const LIMIT_UNITS = 50 * 10_000;
const ORDERS = 100;
const PER_ORDER = 10;
const AMOUNTS = [49.99, 10, 20, 5.5, 0.01, 25, 12.34, 30];

const SUPPORT: Principal = { ...PRINCIPAL, roles: ['support'] };

const POLICY = `
@id("refund-support-limit")
@reason("Support may refund at most $50 per order in total; with this refund the order would reach \${facts.refunded}.")
@alternative("Hand the case to a manager.")
forbid (principal, action == Toolgate::Action::"refund_order", resource)
when { principal.roles.contains("support") && context.facts.refunded.greaterThan(decimal("50.0")) };
`;

function refundTool(pool: pg.Pool, table: string): ToolDefinition {
  return defineTool({
    name: 'refund_order',
    version: '1.0.0',
    owner: 'test',
    description: 'Refunds part of one order (test fixture that records each effect in Postgres).',
    scopes: PRINCIPAL.scopes,
    input: z.object({ order_id: z.string(), amount: z.number().positive() }),
    output: z.object({ refunded: z.number() }),
    destructive: true,
    stateChanging: true,
    conflictKey: (args, ctx) => `${ctx.tenant}:order:${args.order_id}`,
    retrySafety: { kind: 'forwards-key' },
    timeoutMs: 5_000,
    auditFields: ['order_id', 'amount'],
    execute: async (args, inv) => {
      await pool.query(`INSERT INTO ${table} (call_key, order_id, units) VALUES ($1, $2, $3)`, [
        inv.idempotencyKey,
        args.order_id,
        Math.round(args.amount * 10_000),
      ]);
      return { refunded: args.amount };
    },
  }) as ToolDefinition;
}

let stack: ExecutorStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('a cumulative limit cannot be split around', () => {
  it(`${ORDERS * PER_ORDER} concurrent refunds on ${ORDERS} orders: no order passes $50, each refusal is exactly the one that would have`, async () => {
    stack = await createExecutorStack('cumulative_limit');
    const table = `${stack.db.schema}.refund_effects`;
    await stack.db.pool.query(
      `CREATE TABLE ${table} (call_key text PRIMARY KEY, order_id text NOT NULL, units bigint NOT NULL)`,
    );
    const tool = refundTool(stack.db.pool, table);
    const registry = new ToolRegistry();
    registry.register(tool);
    const policy = createPolicyEngine(
      {
        version: 'split-proof-1',
        cedar: POLICY,
        facts: [
          {
            name: 'refunded',
            tools: ['refund_order'],
            measure: { sum: 'amount' },
            per: ['resourceKey'],
            windowMs: 30 * 24 * 3_600_000,
            by: { roles: ['support'] },
          },
        ],
      },
      [tool],
    );
    const catalog = { registry, policy, downstreamLimits: {} };
    const facts = new RedisFactStore(stack.redis.redis, { keyPrefix: stack.redis.prefix });
    const executors = [
      stack.executor({ catalog, facts, ownerId: `${stack.prefix}-a` }),
      stack.executor({ catalog, facts, ownerId: `${stack.prefix}-b` }),
    ];
    await Promise.all(executors.map((e) => e.start()));

    // Deterministic amounts; calls of one order are interleaved with every other order's.
    const plan: { order: string; amount: number }[] = [];
    for (let round = 0; round < PER_ORDER; round++) {
      for (let o = 0; o < ORDERS; o++) {
        plan.push({ order: `O-${o}`, amount: AMOUNTS[(o * 7 + round * 3) % AMOUNTS.length]! });
      }
    }
    const requests = await Promise.all(
      plan.map((p, i) =>
        stack!.request(
          { order_id: p.order, amount: p.amount },
          {
            tool: 'refund_order',
            index: i,
            resourceKey: `${PRINCIPAL.tenant}:order:${p.order}`,
            principal: SUPPORT,
          },
        ),
      ),
    );
    await stack.publishCalls(requests);
    const results = await stack.read('results', requests.length, 120_000);
    const outcome = new Map(results.map((r) => [r.event.callId, r.event.outcome]));
    expect(outcome.size).toBe(requests.length);

    // What a correct limit decides, call by call in each order's publish order.
    const expected = new Map<string, string>();
    const total = new Map<string, number>();
    plan.forEach((p, i) => {
      const units = Math.round(p.amount * 10_000);
      const next = (total.get(p.order) ?? 0) + units;
      if (next > LIMIT_UNITS) expected.set(requests[i]!.callId, 'POLICY_VIOLATION');
      else {
        expected.set(requests[i]!.callId, 'SUCCESS');
        total.set(p.order, next);
      }
    });
    expect(outcome).toEqual(expected);

    const effects = await stack.db.pool.query<{ order_id: string; units: string }>(
      `SELECT order_id, sum(units)::text AS units FROM ${table} GROUP BY order_id`,
    );
    const over = effects.rows.filter((r) => Number(r.units) > LIMIT_UNITS);
    expect(over).toEqual([]);
    const applied = [...expected.values()].filter((o) => o === 'SUCCESS').length;
    const rows = await stack.db.pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table}`);
    expect(Number(rows.rows[0]!.n)).toBe(applied);
    expect(applied).toBeGreaterThan(ORDERS);
    expect(applied).toBeLessThan(requests.length);

    const refused = results.find((r) => r.event.outcome === 'POLICY_VIOLATION')!.event;
    expect(refused.error).toMatchObject({
      code: 'POLICY_VIOLATION',
      retryable: true,
      suggestedFix: 'Hand the case to a manager.',
    });
    expect(refused.error?.message).toMatch(
      /^Support may refund at most \$50 per order in total; with this refund the order would reach \$\d+(\.\d+)?\.$/,
    );

    // Every audit record names the policy; a judged one carries the facts the rule saw.
    const audits = await stack.read('audit', requests.length, 120_000);
    const judged = audits.find((a) => a.event.callId === refused.callId)!.event;
    expect(judged.policy).toMatchObject({ version: 'split-proof-1', roles: ['support'] });
    expect(Number(judged.policy?.facts?.refunded)).toBeGreaterThan(50);
    expect(audits.every((a) => a.event.policy?.version === 'split-proof-1')).toBe(true);
  }, 240_000);
});
