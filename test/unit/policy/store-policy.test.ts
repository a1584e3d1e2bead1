import { describe, expect, it } from 'vitest';
import { MemoryFactStore } from '../../../libs/adapters/memory/index.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import type { ExecutionContext } from '../../../libs/core/types.js';
import type { PolicyEngine } from '../../../libs/pipeline/deps.js';
import { contributionsOf, factSeries } from '../../../libs/policy/aggregate-fact.js';
import { createPolicyEngine } from '../../../libs/policy/index.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import {
  STORE_POLICY,
  STORE_POLICY_CEDAR,
  STORE_POLICY_FACTS,
  storeTools,
} from '../../../services/catalog/index.js';
import { createMemoryDownstreams } from '../../../services/downstreams/index.js';
import { as } from './policy-tools.js';

const clock = new ManualClock(Date.parse('2026-12-01T10:00:00.000Z'));
const tools = storeTools(createMemoryDownstreams({ clock }), clock);
const toolNamed = (name: string): ToolDefinition => {
  const tool = tools.find((t) => t.name === name);
  if (tool === undefined) throw new Error(`no store tool ${name}`);
  return tool;
};

/** A shipped rule that bounds a fact: who it binds, the fact, the direction and the limit. */
interface FactLimit {
  readonly id: string;
  readonly tool: string;
  readonly role: string;
  readonly fact: string;
  readonly above: boolean;
  /** The limit in units of 10^-4. */
  readonly limitUnits: number;
}

/** Every policy of the shipped text, as `@id` and the text up to the next one. */
function shippedPolicies(): { id: string; text: string }[] {
  return STORE_POLICY_CEDAR.split(/(?=@id\(")/)
    .slice(1)
    .map((text) => ({ id: /^@id\("([^"]+)"\)/.exec(text)![1]!, text }));
}

/** The shipped rules that read a fact, each with its limit; throws on one this test cannot read. */
function factLimits(): FactLimit[] {
  return shippedPolicies()
    .filter((p) => p.text.includes('context.facts.'))
    .map(({ id, text }) => {
      const tool = /action == Toolgate::Action::"(\w+)"/.exec(text);
      const role = /principal\.roles\.contains\("(\w+)"\)/.exec(text);
      const limit = /context\.facts\.(\w+)\.(greaterThan|lessThan)\(decimal\("(-?\d+(?:\.\d+)?)"\)\)/.exec(
        text,
      );
      if (tool === null || role === null || limit === null) {
        throw new Error(`rule ${id} reads a fact in a shape this test does not know; extend the test`);
      }
      return {
        id,
        tool: tool[1]!,
        role: role[1]!,
        fact: limit[1]!,
        above: limit[2] === 'greaterThan',
        limitUnits: Math.round(Number(limit[3]) * 10_000),
      };
    });
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
const between = (next: () => number, lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));

/** `total` steps split into `k` positive parts of at most `max` steps each, at random. */
function split(next: () => number, total: number, k: number, max: number): number[] {
  const parts = Array.from({ length: k }, () => 1);
  for (let left = total - k; left > 0;) {
    const i = between(next, 0, k - 1);
    const add = Math.min(left, max - parts[i]!, between(next, 1, Math.max(1, Math.ceil(left / 2))));
    if (add <= 0) continue;
    parts[i] = parts[i]! + add;
    left -= add;
  }
  return parts;
}

/** How a tool's calls carry an amount: the argument, its step in units, the bound per call. */
const AMOUNTS: Readonly<
  Record<string, { field: string; stepUnits: number; maxSteps: number; base: Record<string, unknown> }>
> = {
  issue_refund: {
    field: 'amount',
    stepUnits: 100,
    maxSteps: 1_000_000,
    base: { order_id: 'O-5512', reason: 'damaged' },
  },
  update_inventory: {
    field: 'delta',
    stepUnits: 10_000,
    maxSteps: 500,
    base: { sku: 'SKU-7', reason: 'recount' },
  },
};

/**
 * Runs calls one after another as the pipeline does: each is judged with every fact as it would
 * stand with the call counted (the settled sum plus its own units), and only an allowed call is
 * recorded. Returns each decision.
 */
async function runSequence(
  engine: PolicyEngine,
  tool: ToolDefinition,
  calls: readonly { args: Record<string, unknown>; ctx: ExecutionContext }[],
) {
  const store = new MemoryFactStore();
  const decisions = [];
  for (const [n, { args, ctx }] of calls.entries()) {
    const parsed = tool.input.parse(args);
    const resourceKey = tool.conflictKey!(parsed, ctx);
    const contributionId = `call-${n}`;
    const series = engine
      .factsOf(tool.name)
      .map((fact) => factSeries(fact, { tool: tool.name, args: parsed, resourceKey, contributionId }, ctx));
    const sums = await store.sum(
      series.map((s) => s.query),
      clock.now(),
    );
    const values: Record<string, number> = {};
    series.forEach((s, i) => {
      if (s.own !== undefined) values[s.fact.name] = sums[i]! + s.own;
    });
    const decision = engine.evaluate(tool, parsed, ctx, values);
    if (decision.allowed) await store.record(contributionsOf(series, clock.now()));
    decisions.push(decision);
  }
  return decisions;
}

describe('the shipped store policy', () => {
  const engine = createPolicyEngine(STORE_POLICY, tools);

  it('loads against the real store tools, and reads the facts it declares', () => {
    expect(engine.version).toBe(STORE_POLICY.version);
    expect(engine.factsOf('issue_refund').map((f) => f.name)).toEqual([
      'refunded_by_support_30d',
      'refunded_self_service_30d',
    ]);
    expect(engine.factsOf('update_inventory').map((f) => f.name)).toEqual(['stock_change_by_support_24h']);
    expect(engine.factsOf('lookup_order')).toEqual([]);
    const ids = shippedPolicies().map((p) => p.id);
    expect(ids).toEqual([
      'refund-support-limit',
      'refund-self-service-limit',
      'inventory-support-add-limit',
      'inventory-support-remove-limit',
    ]);
    expect(factLimits().map((r) => r.id)).toEqual(ids);
    for (const fact of STORE_POLICY_FACTS) expect(fact.per).toContain('resourceKey');
  });

  it('refuses with the total it would reach, and names the way to a person who may decide', async () => {
    const call = (amount: number) => ({
      args: { order_id: 'O-5512', amount, reason: 'damaged' },
      ctx: as(['support']),
    });
    const [first, second] = await runSequence(engine, toolNamed('issue_refund'), [call(30), call(30.5)]);
    expect(first).toEqual({ allowed: true });
    expect(second).toMatchObject({
      allowed: false,
      ruleId: 'refund-support-limit',
      alternative: expect.stringContaining('manager') as unknown,
    });
    // The reason names the total the order would reach, its placeholder filled.
    expect(second).toMatchObject({ reason: expect.stringContaining('$60.5') as unknown });
    expect(second).not.toMatchObject({ reason: expect.stringContaining('{') as unknown });
  });

  it('a manager is not bound by the support limit, and does not use it up', async () => {
    const refund = toolNamed('issue_refund');
    const call = (amount: number, roles: string[]) => ({
      args: { order_id: 'O-5512', amount, reason: 'damaged' },
      ctx: as(roles),
    });
    const decisions = await runSequence(engine, refund, [
      call(500, ['manager']),
      call(50, ['support']),
      call(0.01, ['support']),
    ]);
    expect(decisions.map((d) => (d.allowed ? 'allowed' : d.ruleId))).toEqual([
      'allowed',
      'allowed',
      'refund-support-limit',
    ]);
  });

  describe.each(factLimits())('$id: splitting gets no more through than one call could', (rule) => {
    const tool = toolNamed(rule.tool);
    const amount = AMOUNTS[rule.tool]!;
    const sign = rule.above ? 1 : -1;
    const limitSteps = Math.abs(rule.limitUnits) / amount.stepUnits;
    const call = (steps: number, ctx: ExecutionContext) => ({
      args: { ...amount.base, [amount.field]: (sign * steps * amount.stepUnits) / 10_000 },
      ctx,
    });
    const crosses = (units: number) => (rule.above ? units > rule.limitUnits : units < rule.limitUnits);

    it('one call: refused exactly above the limit', async () => {
      for (const steps of [1, limitSteps - 1, limitSteps, limitSteps + 1, 2 * limitSteps]) {
        const [decision] = await runSequence(engine, tool, [call(steps, as([rule.role]))]);
        const refused = crosses(sign * steps * amount.stepUnits);
        expect(decision!.allowed).toBe(!refused);
        if (refused) expect(decision).toMatchObject({ ruleId: rule.id });
      }
    });

    it('k = 2..10 parts, random splits, many seeds: refused exactly when the running total would cross', async () => {
      let sequences = 0;
      let refusals = 0;
      for (let k = 2; k <= 10; k++) {
        for (let seed = 1; seed <= 24; seed++) {
          const next = random(k * 1000 + seed);
          const total = between(next, k, Math.max(k, 3 * limitSteps));
          const parts = split(next, total, k, amount.maxSteps);
          expect(parts.reduce((a, b) => a + b, 0)).toBe(total);
          // The same principal every time; on odd seeds a colleague with the same role takes turns.
          const ctxs = [
            as([rule.role], { id: 'agent-1' }),
            as([rule.role], { id: seed % 2 === 1 ? 'agent-2' : 'agent-1' }),
          ];
          const calls = parts.map((steps, i) => call(steps, ctxs[i % 2]!));
          const decisions = await runSequence(engine, tool, calls);
          let accepted = 0;
          for (const [i, steps] of parts.entries()) {
            const units = sign * steps * amount.stepUnits;
            const refused = crosses(accepted + units);
            expect(decisions[i]!.allowed, `k=${k} seed=${seed} call ${i} of ${parts.join(',')}`).toBe(
              !refused,
            );
            if (refused) {
              expect(decisions[i]).toMatchObject({ ruleId: rule.id });
              refusals += 1;
            } else accepted += units;
          }
          expect(crosses(accepted)).toBe(false);
          expect(Math.abs(accepted)).toBeLessThanOrEqual(Math.abs(rule.limitUnits));
          sequences += 1;
        }
      }
      expect(sequences).toBe(9 * 24);
      expect(refusals).toBeGreaterThan(100);
    });
  });

  it('support moving stock both ways: the net change per SKU stays within 20 either way', async () => {
    const tool = toolNamed('update_inventory');
    for (let seed = 1; seed <= 40; seed++) {
      const next = random(seed);
      const deltas = Array.from({ length: 12 }, () => {
        const d = between(next, -30, 29);
        return d >= 0 ? d + 1 : d;
      });
      const decisions = await runSequence(
        engine,
        tool,
        deltas.map((delta) => ({ args: { sku: 'SKU-7', delta, reason: 'recount' }, ctx: as(['support']) })),
      );
      let net = 0;
      for (const [i, delta] of deltas.entries()) {
        const after = net + delta;
        const expected =
          after > 20
            ? 'inventory-support-add-limit'
            : after < -20
              ? 'inventory-support-remove-limit'
              : 'allowed';
        const d = decisions[i]!;
        expect(d.allowed ? 'allowed' : d.ruleId, `seed=${seed} call ${i} of ${deltas.join(',')}`).toBe(
          expected,
        );
        if (expected === 'allowed') net = after;
      }
    }
  });

  it('no alternative suggests reaching the same effect in smaller or repeated calls', () => {
    const alternatives = [...STORE_POLICY_CEDAR.matchAll(/@alternative\("((?:[^"\\]|\\.)*)"\)/g)].map(
      (m) => m[1]!,
    );
    expect(alternatives.length).toBeGreaterThan(0);
    const forbidden =
      /\b(split|splitting|smaller|several|multiple|parts?|pieces?|instal+ments?|again|retry|repeat\w*|under the limit|below the limit|within the limit|less than|at most|up to)\b/i;
    for (const alternative of alternatives) expect(alternative).not.toMatch(forbidden);
  });
});
