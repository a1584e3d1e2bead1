import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ExecutionContext } from '../../../libs/core/types.js';
import {
  createPolicyEngine,
  parsePolicyRules,
  PolicyRulesError,
  readPath,
} from '../../../libs/policy/index.js';
import type { PolicyEngine } from '../../../libs/pipeline/deps.js';
import type { AggregateFact, PolicyRule, PolicySource } from '../../../libs/policy/index.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { as, forbid, lookup, policyTool, purchaseOrder, refund, TOOLS } from './policy-tools.js';

const support = as(['support']);
const manager = as(['manager']);

/** Loads a policy over {@link TOOLS} (or `tools`). */
const load = (source: Omit<PolicySource, 'version'>, tools: readonly ToolDefinition[] = TOOLS) =>
  createPolicyEngine({ version: 'v1', ...source }, tools);

/** The error a policy that must not load fails with. */
function loadFailure(source: Omit<PolicySource, 'version'>, tools: readonly ToolDefinition[] = TOOLS): Error {
  try {
    load(source, tools);
  } catch (err) {
    expect(err).toBeInstanceOf(PolicyRulesError);
    return err as Error;
  }
  throw new Error('the policy loaded');
}

/** The message a policy that must not load fails with. */
const loadError = (source: Omit<PolicySource, 'version'>, tools: readonly ToolDefinition[] = TOOLS): string =>
  loadFailure(source, tools).message;

/** Refund arguments with a valid order id. */
const refundArgs = (amount: number, more: Record<string, unknown> = {}) => ({
  order_id: 'O-1',
  amount,
  ...more,
});
/** Purchase-order arguments with a supplier. */
const po = (more: Record<string, unknown> = {}) => ({ supplier: 'S-1', ...more });

/** What a call that could not be judged says about `ruleId`. */
const couldNotCheck = (ruleId: string): unknown =>
  expect.objectContaining({
    allowed: false,
    ruleId,
    unevaluable: true,
    reason: expect.stringMatching(
      new RegExp(
        `^This call could not be checked against the business rule "${ruleId}" \\(.+\\), so it was not run\\.$`,
      ),
    ) as unknown,
  });

/** A rule `id` on issue_refund's amount; `more` adds a `when` or an alternative. */
const amountRule = (
  id: string,
  check: PolicyRule['check'],
  reason: string,
  more: Partial<PolicyRule> = {},
): PolicyRule => ({ id, tool: 'issue_refund', field: 'amount', check, reason, ...more });

const RULES: PolicyRule[] = [
  amountRule('support-refund-limit', { max: 50 }, 'Refunds above ${limit} need a manager.', {
    when: { roles: ['support'] },
    alternative: 'Route the refund to a manager.',
  }),
  amountRule('global-refund-cap', { max: 1000 }, 'No refund may exceed ${limit}; ${value} was asked.'),
  {
    id: 'currency',
    tool: 'issue_refund',
    field: 'currency',
    check: { oneOf: ['USD', 'EUR'] },
    reason: 'Currency {value} is not supported; use one of {limit}.',
  },
];

describe('createPolicyEngine: rules as JSON data', () => {
  // Built inside the tests (not while the file is collected), so a load failure fails a test.
  let built: PolicyEngine | undefined;
  const engine = () => (built ??= createPolicyEngine({ version: 'v7', rules: RULES }, TOOLS));

  it('allows calls within every applicable rule', () => {
    expect(engine().version).toBe('v7');
    expect(engine().evaluate(refund, refundArgs(49.99, { currency: 'USD' }), support)).toEqual({
      allowed: true,
    });
    expect(engine().evaluate(refund, refundArgs(50), support)).toEqual({ allowed: true });
  });

  it('support may refund at most $50, with an actionable reason and an alternative', () => {
    expect(engine().evaluate(refund, refundArgs(50.01), support)).toStrictEqual({
      allowed: false,
      ruleId: 'support-refund-limit',
      reason: 'Refunds above $50 need a manager.',
      alternative: 'Route the refund to a manager.',
    });
  });

  it('role-scoped rules apply only to principals holding one of the roles', () => {
    expect(engine().evaluate(refund, refundArgs(75), manager)).toEqual({ allowed: true });
    expect(engine().evaluate(refund, refundArgs(75), as(['manager', 'support']))).toMatchObject({
      allowed: false,
      ruleId: 'support-refund-limit',
    });
  });

  it('the first violated rule in array order wins', () => {
    // 5000 in GBP breaks all three rules for support; the support limit comes first.
    expect(engine().evaluate(refund, refundArgs(5000, { currency: 'GBP' }), support)).toMatchObject({
      ruleId: 'support-refund-limit',
    });
    expect(engine().evaluate(refund, refundArgs(5000, { currency: 'GBP' }), manager)).toStrictEqual({
      allowed: false,
      ruleId: 'global-refund-cap',
      reason: 'No refund may exceed $1000; $5000 was asked.',
    });
    const reordered = load({ rules: [RULES[2]!, RULES[1]!, RULES[0]!] });
    expect(reordered.evaluate(refund, refundArgs(5000, { currency: 'GBP' }), support)).toStrictEqual({
      allowed: false,
      ruleId: 'currency',
      reason: 'Currency GBP is not supported; use one of USD, EUR.',
    });
  });

  it('rules of other tools do not apply; "*" binds the tools that have the field', () => {
    expect(engine().evaluate(purchaseOrder, po({ total: 5000 }), support)).toEqual({ allowed: true });
    // Only create_purchase_order has `express`: issue_refund and lookup_order are not bound.
    const everywhere = load({
      rules: [
        {
          id: 'no-express',
          tool: '*',
          field: 'express',
          check: { oneOf: [false] },
          reason: 'Express is {value}.',
        },
      ],
    });
    expect(everywhere.evaluate(purchaseOrder, po({ express: true }), support)).toStrictEqual({
      allowed: false,
      ruleId: 'no-express',
      reason: 'Express is true.',
    });
    expect(everywhere.evaluate(purchaseOrder, po({ express: false }), support)).toEqual({ allowed: true });
    expect(everywhere.evaluate(refund, refundArgs(1, { express: true }), support)).toEqual({ allowed: true });
    expect(everywhere.evaluate(lookup, { order_id: 'O-1', weight: 1e-9, express: true }, support)).toEqual({
      allowed: true,
    });
  });

  it('a rule for several roles applies when the principal has any one of them', () => {
    const e = load({
      rules: [amountRule('junior-cap', { max: 20 }, 'cap', { when: { roles: ['support', 'intern'] } })],
    });
    expect(e.evaluate(refund, refundArgs(30), as(['intern']))).toMatchObject({
      allowed: false,
      ruleId: 'junior-cap',
    });
    expect(e.evaluate(refund, refundArgs(30), as(['support']))).toMatchObject({
      allowed: false,
      ruleId: 'junior-cap',
    });
    expect(e.evaluate(refund, refundArgs(30), manager)).toEqual({ allowed: true });
    expect(e.evaluate(refund, refundArgs(30), as([]))).toEqual({ allowed: true });
  });

  it('tenant-scoped rules apply only in those tenants, and both conditions must hold', () => {
    const e = load({
      rules: [
        amountRule('t2-cap', { max: 10 }, 'cap', { when: { tenants: ['t2', 't3'] } }),
        amountRule('t4-support-cap', { max: 10 }, 'cap', { when: { tenants: ['t4'], roles: ['support'] } }),
      ],
    });
    expect(e.evaluate(refund, refundArgs(20), support)).toEqual({ allowed: true });
    expect(e.evaluate(refund, refundArgs(20), as([], { tenant: 't2' }))).toMatchObject({ ruleId: 't2-cap' });
    expect(e.evaluate(refund, refundArgs(20), as([], { tenant: 't3' }))).toMatchObject({ ruleId: 't2-cap' });
    expect(e.evaluate(refund, refundArgs(20), as(['support'], { tenant: 't4' }))).toMatchObject({
      ruleId: 't4-support-cap',
    });
    expect(e.evaluate(refund, refundArgs(20), as(['manager'], { tenant: 't4' }))).toEqual({ allowed: true });
  });

  it('reads roles from the verified principal, never from the arguments', () => {
    expect(
      engine().evaluate(refund, refundArgs(75, { role: 'manager', roles: ['manager'] }), support),
    ).toMatchObject({ allowed: false, ruleId: 'support-refund-limit' });
    expect(
      engine().evaluate(refund, refundArgs(75, { role: 'support', roles: ['support'] }), manager),
    ).toEqual({
      allowed: true,
    });
  });

  it('checks min, nested paths, Longs and booleans; absent fields are not checked', () => {
    const e = load({
      rules: [
        {
          id: 'min',
          tool: 'create_purchase_order',
          field: 'total',
          check: { min: 1 },
          reason: 'total {value} below {limit}',
        },
        {
          id: 'country',
          tool: 'create_purchase_order',
          field: 'shipping.country',
          check: { noneOf: ['XX', 'YY'] },
          reason: 'no shipping to {value} ({limit})',
        },
        {
          id: 'qty',
          tool: 'create_purchase_order',
          field: 'quantity',
          check: { max: 500 },
          reason: 'qty {value} > {limit}',
        },
        {
          id: 'no-express',
          tool: 'create_purchase_order',
          field: 'express',
          check: { oneOf: [false] },
          reason: 'express {value}',
        },
      ],
    });
    expect(e.evaluate(purchaseOrder, po(), support)).toEqual({ allowed: true });
    expect(e.evaluate(purchaseOrder, po({ total: 1, quantity: 500, express: false }), support)).toEqual({
      allowed: true,
    });
    expect(e.evaluate(purchaseOrder, po({ total: 0.5 }), support)).toMatchObject({
      reason: 'total 0.5 below 1',
    });
    expect(e.evaluate(purchaseOrder, po({ total: 0.9999 }), support)).toMatchObject({ ruleId: 'min' });
    expect(e.evaluate(purchaseOrder, po({ shipping: { country: 'YY' } }), support)).toMatchObject({
      reason: 'no shipping to YY (XX, YY)',
    });
    expect(e.evaluate(purchaseOrder, po({ shipping: { country: 'DE' } }), support)).toEqual({
      allowed: true,
    });
    expect(e.evaluate(purchaseOrder, po({ quantity: 501 }), support)).toMatchObject({
      reason: 'qty 501 > 500',
    });
    expect(e.evaluate(purchaseOrder, po({ express: true }), support)).toMatchObject({
      reason: 'express true',
    });
  });

  it('a fractional bound on a Long field keeps its meaning', () => {
    const e = load({
      rules: [
        { id: 'max', tool: 'create_purchase_order', field: 'quantity', check: { max: 2.5 }, reason: 'max' },
        { id: 'min', tool: 'create_purchase_order', field: 'quantity', check: { min: -1.5 }, reason: 'min' },
      ],
    });
    expect(e.evaluate(purchaseOrder, po({ quantity: 2 }), support)).toEqual({ allowed: true });
    expect(e.evaluate(purchaseOrder, po({ quantity: 3 }), support)).toMatchObject({ ruleId: 'max' });
    expect(e.evaluate(purchaseOrder, po({ quantity: -1 }), support)).toEqual({ allowed: true });
    expect(e.evaluate(purchaseOrder, po({ quantity: -2 }), support)).toMatchObject({ ruleId: 'min' });
  });

  it('does not expand placeholders found inside the model value', () => {
    expect(engine().evaluate(refund, refundArgs(5, { currency: '{limit}' }), manager)).toMatchObject({
      reason: 'Currency {limit} is not supported; use one of USD, EUR.',
    });
    expect(engine().evaluate(refund, refundArgs(5, { currency: '{args.amount}' }), manager)).toMatchObject({
      reason: 'Currency {args.amount} is not supported; use one of USD, EUR.',
    });
  });

  it('is immune to later changes of the source it was built from', () => {
    const rules = structuredClone(RULES);
    const facts: AggregateFact[] = [
      { name: 'n', tools: ['issue_refund'], measure: { count: true }, per: ['principal'], windowMs: 1000 },
    ];
    const source = { version: 'v1', rules, facts };
    const e = createPolicyEngine(source, TOOLS);
    (rules[0]!.check as { max: number }).max = 10_000;
    rules.length = 0;
    facts[0] = { ...facts[0]!, name: 'changed' };
    source.version = 'v2';
    expect(e.version).toBe('v1');
    expect(e.evaluate(refund, refundArgs(75), support)).toMatchObject({ allowed: false });
    expect(e.factsOf('issue_refund').map((f) => f.name)).toEqual(['n']);
    expect(Object.isFrozen(e.factsOf('issue_refund')[0])).toBe(true);
  });

  it.each([
    ['maxItems', { field: 'line_items', check: { maxItems: 2 } }, 'maxItems cannot be checked by a policy'],
    ['an array index', { field: 'line_items.0.quantity', check: { max: 5 } }, 'cannot be addressed by index'],
    ['a missing field', { field: 'totl', check: { max: 5 } }, 'has no field "totl"'],
    ['a field under a scalar', { field: 'total.cents', check: { max: 5 } }, 'has no field "total.cents"'],
    [
      'an unknown tool',
      { tool: 'create_purchase_ordr', field: 'total', check: { max: 5 } },
      'no tool is named "create_purchase_ordr"',
    ],
    [
      'max on a string',
      { field: 'supplier', check: { max: 5 } },
      'max needs a number field; "supplier" is String',
    ],
    ['min on a set', { field: 'tags', check: { min: 5 } }, 'min needs a number field; "tags" is Set'],
    [
      'a oneOf literal of the wrong type',
      { field: 'supplier', check: { oneOf: ['S-1', 7] } },
      '7 cannot be compared with "supplier" (String)',
    ],
    [
      'a fractional literal on a Long',
      { field: 'quantity', check: { noneOf: [1.5] } },
      '1.5 cannot be compared with "quantity" (Long)',
    ],
    [
      'a bound with more than four places',
      { field: 'total', check: { max: 0.00001 } },
      '0.00001 has more than four decimal places',
    ],
  ])('refuses to load a JSON rule with %s, naming the rule', (_label, rule, problem) => {
    const message = loadError({
      rules: [{ id: 'bad', tool: 'create_purchase_order', reason: 'r', ...rule }],
    });
    expect(message).toContain('Rule "bad"');
    expect(message).toContain(problem);
  });

  it('refuses to load a "*" rule whose field no tool has', () => {
    expect(
      loadError({ rules: [{ id: 'bad', tool: '*', field: 'nothing', check: { max: 1 }, reason: 'r' }] }),
    ).toBe('Rule "bad": no tool has a field "nothing".');
  });

  it('reports a rule Cedar cannot take where it stands in the text', () => {
    const message = loadError({
      cedar: forbid('first', 'issue_refund', 'false'),
      rules: [
        { id: 'huge', tool: 'create_purchase_order', field: 'quantity', check: { max: 1e20 }, reason: 'r' },
      ],
    });
    // The JSON rules follow the Cedar text after a blank line: @id, @reason, forbid, then when.
    expect(message).toMatch(/^The policy does not parse:\n {2}line 9, column \d+: /);
    expect(message).toContain('number too large');
  });
});

describe('createPolicyEngine: the refusal text', () => {
  const show = (check: PolicyRule['check'], field = 'note', reason = 'got {value}, limit {limit}') =>
    load({ rules: [{ id: 'r', tool: 'issue_refund', field, check, reason }] });
  const reasonFor = (check: PolicyRule['check'], more: Record<string, unknown>, field?: string) => {
    const decision = show(check, field).evaluate(refund, refundArgs(1, more), support);
    return decision.allowed ? undefined : decision.reason;
  };

  it('shows a value of up to 60 characters as it is, and cuts a longer one with a visible mark', () => {
    const sixty = 'x'.repeat(60);
    expect(reasonFor({ oneOf: ['ok'] }, { note: sixty })).toBe(`got ${sixty}, limit ok`);
    expect(reasonFor({ oneOf: ['ok'] }, { note: `${sixty}y` })).toBe(`got ${sixty}…, limit ok`);
  });

  it('shows numbers and structured values as JSON would', () => {
    expect(reasonFor({ max: 0.5 }, {}, 'amount')).toBe('got 1, limit 0.5');
    const cedar = forbid(
      'sets',
      'issue_refund',
      'context.args has roles && context.args.roles.contains("a")',
      {
        reason: 'roles {args.roles}, first {args.roles.0}, flag {args.flag}',
      },
    );
    const decision = load({ cedar }).evaluate(
      refund,
      refundArgs(1, { roles: ['a', 'b'], flag: true }),
      support,
    );
    expect(decision).toMatchObject({ reason: 'roles ["a","b"], first a, flag true' });
  });

  it('shows a value JSON cannot encode without failing', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const cedar = forbid('odd', 'issue_refund', 'true', { reason: '{args.cyclic} / {args.fn} / {args.big}' });
    const decision = load({ cedar }).evaluate(
      refund,
      refundArgs(1, { cyclic, fn: () => 1, big: 10n }),
      support,
    );
    expect(decision).toMatchObject({ reason: '[object Object] / () => 1 / 10' });
  });

  it('shows a number JSON cannot hold as JavaScript writes it', () => {
    // Only arguments no rule reads can hold such a number; the reason may still name them.
    const cedar = forbid('odd', 'issue_refund', 'true', { reason: '{args.n}, {args.m}, {args.z}' });
    const args = refundArgs(1, { n: Number.NaN, m: Number.NEGATIVE_INFINITY, z: -0 });
    expect(load({ cedar }).evaluate(refund, args, support)).toMatchObject({ reason: 'NaN, -Infinity, 0' });
  });

  it("leaves a fact placeholder as it is when the fact is not this tool's or not given", () => {
    const cedar = forbid('r', 'issue_refund', 'true', { reason: '{facts.ordered} / {facts.refunded}' });
    const e = load({
      cedar,
      facts: [
        { name: 'ordered', tools: ['create_purchase_order'], measure: { count: true }, per: [], windowMs: 1 },
      ],
    });
    expect(e.evaluate(refund, refundArgs(1), support, { ordered: 5, refunded: 7 })).toMatchObject({
      reason: '{facts.ordered} / {facts.refunded}',
    });
    expect(e.evaluate(refund, refundArgs(1), support)).toMatchObject({
      reason: '{facts.ordered} / {facts.refunded}',
    });
  });

  it('fills every placeholder, and names the rule; no alternative means none is offered', () => {
    const e = show({ max: 1 }, 'amount', '{value} > {limit}; again {value} > {limit}');
    expect(e.evaluate(refund, refundArgs(3), support)).toStrictEqual({
      allowed: false,
      ruleId: 'r',
      reason: '3 > 1; again 3 > 1',
    });
  });

  it('does not check an absent or null field, and checks a falsy one', () => {
    const e = show({ oneOf: ['ok'] });
    expect(e.evaluate(refund, refundArgs(1), support)).toEqual({ allowed: true });
    expect(e.evaluate(refund, refundArgs(1, { note: null }), support)).toEqual({ allowed: true });
    expect(e.evaluate(refund, refundArgs(1, { note: '' }), support)).toMatchObject({
      allowed: false,
      ruleId: 'r',
    });
    const min = load({
      rules: [{ id: 'm', tool: 'create_purchase_order', field: 'quantity', check: { min: 1 }, reason: 'r' }],
    });
    expect(min.evaluate(purchaseOrder, po({ quantity: 0 }), support)).toMatchObject({
      allowed: false,
      ruleId: 'm',
    });
  });

  it('carries the version it was built with, and refuses one that is not a non-empty string', () => {
    expect(show({ max: 1 }, 'amount').version).toBe('v1');
    expect(() => createPolicyEngine({ version: 7 as unknown as string, rules: RULES }, TOOLS)).toThrow(
      new PolicyRulesError('A policy version must be a non-empty string.'),
    );
    expect(() => createPolicyEngine({ version: '', rules: RULES }, TOOLS)).toThrow(
      new PolicyRulesError('A policy version must be a non-empty string.'),
    );
  });

  it('ignores roles that are not strings, and a principal without roles', () => {
    const rules: PolicyRule[] = [amountRule('r', { max: 1 }, 'no', { when: { roles: ['support'] } })];
    const e = load({ rules });
    const odd = as([]);
    const oddRoles = {
      ...odd,
      principal: { ...odd.principal, roles: [7, 'support'] },
    } as unknown as ExecutionContext;
    expect(e.evaluate(refund, refundArgs(2), oddRoles)).toMatchObject({ allowed: false });
    const none = { ...odd, principal: { ...odd.principal, roles: undefined } } as unknown as ExecutionContext;
    expect(e.evaluate(refund, refundArgs(2), none)).toEqual({ allowed: true });
    const cedar = forbid('no-scope', 'issue_refund', '!principal.scopes.contains("refunds:write")');
    const noScopes = {
      ...odd,
      principal: { ...odd.principal, scopes: 'refunds:write' },
    } as unknown as ExecutionContext;
    expect(load({ cedar }).evaluate(refund, refundArgs(2), noScopes)).toMatchObject({ ruleId: 'no-scope' });
  });
});

describe('createPolicyEngine: Cedar that does not load', () => {
  const on = (condition: string) => ({ cedar: forbid('r', 'issue_refund', condition) });

  it("names a misspelt field where it stands, with Cedar's hint", () => {
    const message = loadError(on('context.args.amont.greaterThan(decimal("1.0"))'));
    expect(message).toMatch(/^The policy does not fit the tools:\n {2}line 4, column 8: /);
    expect(message).toContain('`args.amont`');
    expect(message).toContain('did you mean `amount`?');
  });

  it('names a type mismatch', () => {
    expect(loadError(on('context.args.amount > 10'))).toMatch(
      /^The policy does not fit the tools:\n {2}line 4, column 8: .*expected Long but saw decimal/,
    );
    expect(loadError(on('"50" < 10'))).toMatch(/line 4, column 8: .*expected Long but saw String/);
  });

  it('names an optional field read without `has`, with the fix as help', () => {
    const message = loadError(on('context.args.note == "x"'));
    expect(message).toContain('line 4, column 8: ');
    expect(message).toContain('optional attribute `args.note`');
    expect(message).toContain(
      " (try testing for the attribute's presence with `context.args has note && ..`)",
    );
  });

  it('names an unknown tool and an unknown fact', () => {
    const tool = loadError({ cedar: forbid('r', 'refund_issue', 'true') });
    expect(tool).toMatch(/line 3, column 30: .*unrecognized action `Toolgate::Action::"refund_issue"`/);
    expect(tool).toContain('did you mean `Toolgate::Action::"issue_refund"`?');
    expect(loadError(on('context.facts.refunded.greaterThan(decimal("1.0"))'))).toMatch(
      /line 4, column 8: .*attribute `facts.refunded` in context for Toolgate::Action::"issue_refund" not found/,
    );
  });

  it('counts lines and columns across the whole text', () => {
    const cedar = [
      '// Refund rules.',
      forbid('fine', 'issue_refund', 'context.args.amount.greaterThan(decimal("1.0"))'),
      '',
      '@id("bad") @reason("r")',
      'forbid (principal, action == Toolgate::Action::"issue_refund", resource) when {',
      '  principal.tenant == "t1" && context.args.amount > 10',
      '};',
    ].join('\n');
    expect(loadError({ cedar })).toMatch(/^The policy does not fit the tools:\n {2}line 9, column 31: /);
  });

  it.each([
    [
      'a permit policy',
      '@id("p")\n@reason("r")\npermit (principal, action, resource);',
      'line 1, column 1: business rules are forbid policies',
    ],
    [
      'a policy without @id',
      '@reason("r")\nforbid (principal, action, resource);',
      'line 1, column 1: the policy has no @id("…")',
    ],
    [
      'an empty @id',
      '@id("")\n@reason("r")\nforbid (principal, action, resource);',
      'line 1, column 1: the policy has no @id("…")',
    ],
    [
      'an @id without a value',
      '@id\n@reason("r")\nforbid (principal, action, resource);',
      'line 1, column 1: the policy has no @id("…")',
    ],
    [
      'a policy without @reason',
      '@id("a")\nforbid (principal, action, resource);',
      'line 1, column 1: the policy has no @reason("…")',
    ],
    [
      'an empty @reason',
      '@id("a")\n@reason("")\nforbid (principal, action, resource);',
      'line 1, column 1: the policy has no @reason("…")',
    ],
    [
      'a duplicate @id',
      `${forbid('a', 'issue_refund', 'true')}\n\n  ${forbid('a', 'lookup_order', 'true')}`,
      'line 6, column 3: duplicate @id("a")',
    ],
  ])('refuses %s, saying where', (_label, cedar, problem) => {
    const message = loadError({ cedar });
    expect(message).toMatch(/^Invalid policy:\n {2}/);
    expect(message).toContain(problem);
  });

  it('lists every error Cedar reports, one a line, each naming its policy by @id', () => {
    const cedar = [
      forbid('fine', 'issue_refund', 'true'),
      forbid('two-errors', 'issue_refund', 'context.args.amount > 1 && context.args.nope'),
    ].join('\n');
    // Cedar's own wording (4.13): a message, then its hint in parentheses when it has one. Cedar
    // does not report the errors of one policy in a fixed order.
    const [head, ...lines] = loadError({ cedar }).split('\n');
    expect(head).toBe('The policy does not fit the tools:');
    expect(lines.sort()).toEqual([
      '  line 8, column 35: for policy "two-errors", attribute `args.nope` in context for ' +
        'Toolgate::Action::"issue_refund" not found (did you mean `note`?)',
      '  line 8, column 8: for policy "two-errors", unexpected type: expected Long but saw decimal',
    ]);
  });

  it('names a policy by @id however many come before it', () => {
    const fine = Array.from({ length: 11 }, (_, i) => forbid(`rule-${i}`, 'issue_refund', 'true'));
    const cedar = [...fine, forbid('twelfth', 'issue_refund', 'context.args.amount > 1')].join('\n');
    expect(loadError({ cedar })).toMatch(
      /^The policy does not fit the tools:\n {2}line 48, column 8: for policy "twelfth", /,
    );
  });

  it('finds each policy where it stands, even when two read the same', () => {
    const many = Array.from({ length: 11 }, (_, i) => forbid(`rule-${i}`, 'issue_refund', 'true'));
    expect(loadError({ cedar: [...many, forbid('rule-3', 'issue_refund', 'true')].join('\n') })).toBe(
      'Invalid policy:\n  line 45, column 1: duplicate @id("rule-3")',
    );
    const same = forbid('twice', 'issue_refund', 'true');
    expect(loadError({ cedar: `${same}\n${same}\n\n${same}` })).toBe(
      [
        'Invalid policy:',
        '  line 5, column 1: duplicate @id("twice")',
        '  line 10, column 1: duplicate @id("twice")',
      ].join('\n'),
    );
  });

  it('reports a JSON rule Cedar cannot take at its line when there is no Cedar text', () => {
    const rules: PolicyRule[] = [
      { id: 'huge', tool: 'create_purchase_order', field: 'quantity', check: { max: 1e20 }, reason: 'r' },
    ];
    for (const cedar of [undefined, '', '  \n  ']) {
      expect(loadError({ ...(cedar === undefined ? {} : { cedar }), rules })).toMatch(
        /^The policy does not parse:\n {2}line 4, column \d+: /,
      );
    }
  });

  it('lists every problem of the text at once', () => {
    const cedar =
      '@id("a")\npermit (principal, action, resource);\n@reason("r")\nforbid (principal, action, resource);';
    expect(loadError({ cedar })).toBe(
      [
        'Invalid policy:',
        '  line 1, column 1: business rules are forbid policies; permit is decided by scopes and resource rules',
        '  line 1, column 1: the policy has no @reason("…")',
        '  line 3, column 1: the policy has no @id("…")',
      ].join('\n'),
    );
  });

  it('refuses text that does not parse, saying where', () => {
    const message = loadError({
      cedar: `${forbid('a', 'issue_refund', 'true')}\n${forbid('b', 'issue_refund', 'true &&')}`,
    });
    expect(message).toMatch(
      /^The policy does not parse:\n {2}line 8, column 16: failed to parse policies from string: unexpected token/,
    );
    expect(loadError({ cedar: 'forbid (?principal, action, resource);' })).toMatch(
      /^The policy does not parse:/,
    );
  });

  it('refuses facts that name an unknown tool, have a bad name, repeat a name or sum a non-number', () => {
    const fact = (more: Partial<AggregateFact>): AggregateFact => ({
      name: 'refunded',
      tools: ['issue_refund'],
      measure: { sum: 'amount' },
      per: ['resourceKey'],
      windowMs: 1000,
      ...more,
    });
    expect(loadError({ facts: [fact({ tools: ['issue_refund', 'refund_issue'] })] })).toBe(
      'Fact "refunded": no tool is named "refund_issue".',
    );
    expect(loadError({ facts: [fact({ name: 'refunded-30d' })] })).toBe(
      'Invalid fact #0:\n  name: must be a Cedar identifier (letters, digits, _)',
    );
    expect(loadError({ facts: [fact({}), fact({ name: '__x' })] })).toBe(
      'Invalid fact #1:\n  name: must not start with __',
    );
    expect(loadError({ facts: [fact({ by: { roles: [] } })] })).toContain('\n  by.roles: ');
    expect(loadError({ facts: [fact({ per: ['resourceKey', 'args'] as never })] })).toContain(
      '\n  per.1: must be resourceKey, principal, tool or args.<field path>',
    );
    expect(loadError({ facts: [fact({}), fact({ measure: { count: true } })] })).toBe(
      'Duplicate fact "refunded".',
    );
    expect(loadError({ facts: [fact({ measure: { sum: 'note' } })] })).toBe(
      'Fact "refunded": tool issue_refund has no number argument "note" to sum.',
    );
    expect(loadError({ facts: [fact({ tools: ['issue_refund', 'lookup_order'] })] })).toBe(
      'Fact "refunded": tool lookup_order has no number argument "amount" to sum.',
    );
    expect(
      loadError({
        facts: [fact({ tools: ['create_purchase_order'], measure: { sum: 'shipping.country' } })],
      }),
    ).toBe('Fact "refunded": tool create_purchase_order has no number argument "shipping.country" to sum.');
    expect(
      loadError({ facts: [fact({ tools: ['create_purchase_order'], measure: { sum: 'total.x' } })] }),
    ).toContain('has no number argument "total.x"');
    expect(() =>
      load({ facts: [fact({ tools: ['create_purchase_order'], measure: { sum: 'quantity' } })] }),
    ).not.toThrow();
    expect(loadError({ facts: [fact({ measure: { sum: 'missing.deep.field' } })] })).toBe(
      'Fact "refunded": tool issue_refund has no number argument "missing.deep.field" to sum.',
    );
    expect(loadError({ facts: [fact({ name: '1x', windowMs: 0 })] })).toBe(
      [
        'Invalid fact #0:',
        '  name: must be a Cedar identifier (letters, digits, _)',
        '  windowMs: Too small: expected number to be >0',
      ].join('\n'),
    );
    expect(loadFailure({ facts: [fact({ windowMs: 0 })] }).cause).toBeInstanceOf(z.ZodError);
  });
});

describe('createPolicyEngine: Cedar rules', () => {
  it('compares decimals exactly at the boundary', () => {
    const e = load({
      cedar: forbid('cap', 'issue_refund', 'context.args.amount.greaterThan(decimal("50.0"))'),
    });
    for (const amount of [0.0001, 49.99, 49.9999, 50, 50.0]) {
      expect(e.evaluate(refund, refundArgs(amount), support)).toEqual({ allowed: true });
    }
    for (const amount of [50.0001, 50.01, 1e9]) {
      expect(e.evaluate(refund, refundArgs(amount), support)).toStrictEqual({
        allowed: false,
        ruleId: 'cap',
        reason: 'refused by cap',
      });
    }
  });

  it('reads Longs, booleans, nested records behind `has`, and sets', () => {
    const e = load({
      cedar: [
        forbid('qty', 'create_purchase_order', 'context.args has quantity && context.args.quantity > 3'),
        forbid(
          'zip',
          'create_purchase_order',
          'context.args has shipping && context.args.shipping has zip && context.args.shipping.zip like "9*"',
        ),
        forbid(
          'tags',
          'create_purchase_order',
          'context.args has tags && context.args.tags.containsAny(["hazmat", "recalled"])',
        ),
        forbid('express', 'create_purchase_order', 'context.args has express && context.args.express'),
        forbid(
          'items',
          'create_purchase_order',
          'context.args has line_items && context.args.line_items.contains({sku: "X", quantity: 1})',
        ),
      ].join('\n'),
    });
    const decide = (args: Record<string, unknown>) => {
      const d = e.evaluate(purchaseOrder, po(args), support);
      return d.allowed ? 'allowed' : d.ruleId;
    };
    expect(decide({})).toBe('allowed');
    expect(decide({ quantity: 3 })).toBe('allowed');
    expect(decide({ quantity: 4 })).toBe('qty');
    expect(decide({ quantity: Number.MAX_SAFE_INTEGER })).toBe('qty');
    expect(decide({ shipping: { country: 'US' } })).toBe('allowed');
    expect(decide({ shipping: { country: 'US', zip: '10115' } })).toBe('allowed');
    expect(decide({ shipping: { country: 'US', zip: '90210' } })).toBe('zip');
    expect(decide({ shipping: null })).toBe('allowed');
    expect(decide({ tags: [] })).toBe('allowed');
    expect(decide({ tags: ['fragile', 'recalled'] })).toBe('tags');
    expect(decide({ express: false })).toBe('allowed');
    expect(decide({ express: true })).toBe('express');
    expect(decide({ line_items: [{ sku: 'X', quantity: 2 }] })).toBe('allowed');
    expect(
      decide({
        line_items: [
          { sku: 'Y', quantity: 2 },
          { sku: 'X', quantity: 1 },
        ],
      }),
    ).toBe('items');
  });

  it('reads the verified principal: tenant, roles and scopes', () => {
    const e = load({
      cedar: [
        forbid('tenant', 'issue_refund', 'principal.tenant == "t2"'),
        forbid(
          'intern',
          'issue_refund',
          'principal.roles.contains("intern") && context.args.amount.greaterThan(decimal("10.0"))',
        ),
        forbid(
          'scope',
          'issue_refund',
          '!principal.scopes.contains("refunds:large") && context.args.amount.greaterThan(decimal("100.0"))',
        ),
        forbid('who', 'issue_refund', 'principal == Toolgate::Principal::"mallory"'),
      ].join('\n'),
    });
    const decide = (amount: number, ctx: ExecutionContext) => {
      const d = e.evaluate(refund, refundArgs(amount), ctx);
      return d.allowed ? 'allowed' : d.ruleId;
    };
    expect(decide(1, as([], { tenant: 't2' }))).toBe('tenant');
    expect(decide(1, as([], { tenant: 't1' }))).toBe('allowed');
    expect(decide(11, as(['intern']))).toBe('intern');
    expect(decide(11, as(['support']))).toBe('allowed');
    expect(decide(101, as(['support'], { scopes: ['refunds:write'] }))).toBe('scope');
    expect(decide(101, as(['support'], { scopes: ['refunds:write', 'refunds:large'] }))).toBe('allowed');
    expect(decide(1, as([], { id: 'mallory' }))).toBe('who');
  });

  it('answers with the first refusing policy in text order, whatever order Cedar reports', () => {
    // Twelve rules (Cedar lists policies by its own ids, policy0, policy1, policy10, …), with ids
    // out of alphabetical order; rule i refuses amounts above 12 - i, so an amount of 12.5 - i is
    // refused by rule i and every rule after it.
    const ids = ['m', 'z', 'b', 'y', 'a', 'q', 'c', 'x', 'd', 'w', 'e', 'v'];
    const e = load({
      cedar: ids
        .map((id, i) => forbid(id, 'issue_refund', `context.args.amount.greaterThan(decimal("${12 - i}.0"))`))
        .join('\n'),
    });
    expect(e.evaluate(refund, refundArgs(1), support)).toEqual({ allowed: true });
    for (const [i, id] of ids.entries()) {
      expect(e.evaluate(refund, refundArgs(12.5 - i), support)).toStrictEqual({
        allowed: false,
        ruleId: id,
        reason: `refused by ${id}`,
      });
    }
    const reversed = load({
      cedar: [...ids]
        .reverse()
        .map((id) => forbid(id, 'issue_refund', 'true'))
        .join('\n'),
    });
    expect(reversed.evaluate(refund, refundArgs(1), support)).toMatchObject({ ruleId: 'v' });
  });

  it('an evaluation error in a forbid refuses the call (fail closed), in its place in the text', () => {
    const overflow = 'context.args.quantity * 4611686018427387904 < 0';
    const cedar = (first: string, second: string) =>
      load({
        cedar: [
          forbid('first', 'create_purchase_order', `context.args has quantity && ${first}`),
          forbid('second', 'create_purchase_order', `context.args has quantity && ${second}`),
        ].join('\n'),
      });
    expect(cedar(overflow, 'false').evaluate(purchaseOrder, po({ quantity: 1 }), support)).toEqual({
      allowed: true,
    });
    expect(cedar(overflow, 'false').evaluate(purchaseOrder, po({ quantity: 2 }), support)).toEqual(
      couldNotCheck('first'),
    );
    expect(cedar(overflow, 'false').evaluate(purchaseOrder, po({ quantity: 2 }), support)).toMatchObject({
      reason: expect.stringContaining('(a value it reads is missing or cannot be compared)') as unknown,
    });
    expect(cedar(overflow, 'true').evaluate(purchaseOrder, po({ quantity: 2 }), support)).toEqual(
      couldNotCheck('first'),
    );
    expect(cedar('true', overflow).evaluate(purchaseOrder, po({ quantity: 2 }), support)).toStrictEqual({
      allowed: false,
      ruleId: 'first',
      reason: 'refused by first',
    });
    expect(cedar('false', overflow).evaluate(purchaseOrder, po({ quantity: 2 }), support)).toEqual(
      couldNotCheck('second'),
    );
  });

  it('fills {args.<path>} and {facts.<name>} in the reason, once', () => {
    const e = load({
      facts: [
        {
          name: 'spent',
          tools: ['create_purchase_order'],
          measure: { sum: 'total' },
          per: ['principal'],
          windowMs: 1000,
        },
      ],
      cedar: forbid('r', 'create_purchase_order', 'true', {
        reason:
          '{args.supplier} to {args.shipping.country}: {args.total} ({facts.spent} so far); {args.none}, {facts.none}, {other.x}, {args.}',
      }),
    });
    expect(
      e.evaluate(
        purchaseOrder,
        po({ supplier: '{args.total}', total: 12.5, shipping: { country: 'DE' } }),
        support,
        { spent: 1_250_000 },
      ),
    ).toStrictEqual({
      allowed: false,
      ruleId: 'r',
      reason: '{args.total} to DE: 12.5 (125 so far); {args.none}, {facts.none}, {other.x}, {args.}',
    });
  });

  it('offers an alternative only when the policy names one', () => {
    const e = load({
      cedar: [
        forbid('with', 'issue_refund', 'context.args.amount.greaterThan(decimal("100.0"))', {
          alternative: 'Ask a manager.',
        }),
        '@id("bare") @reason("no") @alternative forbid (principal, action == Toolgate::Action::"issue_refund", resource);',
      ].join('\n'),
    });
    expect(e.evaluate(refund, refundArgs(101), support)).toStrictEqual({
      allowed: false,
      ruleId: 'with',
      reason: 'refused by with',
      alternative: 'Ask a manager.',
    });
    expect(e.evaluate(refund, refundArgs(1), support)).toStrictEqual({
      allowed: false,
      ruleId: 'bare',
      reason: 'no',
    });
  });

  it('allows a tool no policy governs without looking at its arguments', () => {
    const e = load({
      cedar: [
        forbid('one', 'issue_refund', 'true'),
        '@id("two") @reason("r") forbid (principal, action in [Toolgate::Action::"create_purchase_order", Toolgate::Action::"issue_refund"], resource);',
        '@id("three") @reason("r") forbid (principal, action in Toolgate::Action::"issue_refund", resource);',
      ].join('\n'),
    });
    expect(e.evaluate(lookup, { order_id: 'O-1', weight: 1e-9 }, support)).toEqual({ allowed: true });
    expect(e.evaluate(lookup, 'not even an object', support)).toEqual({ allowed: true });
    expect(e.evaluate(policyTool('unknown_tool', z.object({})), {}, support)).toEqual({ allowed: true });
    expect(e.evaluate(purchaseOrder, po(), support)).toMatchObject({ ruleId: 'two' });
    expect(e.evaluate(refund, refundArgs(1), support)).toMatchObject({ ruleId: 'one' });
    expect(load({}).evaluate(refund, refundArgs(1e-9), support)).toEqual({ allowed: true });
    expect(load({ cedar: '  \n ', rules: [] }).evaluate(refund, refundArgs(1e-9), support)).toEqual({
      allowed: true,
    });
  });

  it('`action in` one tool governs that tool only', () => {
    const e = load({
      cedar:
        '@id("weights") @reason("r") forbid (principal, action in Toolgate::Action::"lookup_order", resource) ' +
        'when { context.args.weight.greaterThan(decimal("10.0")) };',
    });
    expect(e.evaluate(lookup, { order_id: 'O-1', weight: 11 }, support)).toMatchObject({ ruleId: 'weights' });
    expect(e.evaluate(lookup, { order_id: 'O-1', weight: 1e-9 }, support)).toEqual(couldNotCheck('weights'));
    expect(e.evaluate(refund, refundArgs(1e-9), support)).toEqual({ allowed: true });
  });

  it('a principal holds only the roles and scopes that are strings in a list', () => {
    const e = load({
      cedar: forbid('any-role', 'issue_refund', '!principal.roles.isEmpty() || !principal.scopes.isEmpty()'),
    });
    const base = as([]);
    const withPrincipal = (more: Record<string, unknown>) =>
      ({ ...base, principal: { ...base.principal, ...more } }) as unknown as ExecutionContext;
    for (const odd of [
      { roles: 'support', scopes: 'refunds:write' },
      { roles: [7, null], scopes: [{ scope: 'x' }] },
      { roles: undefined, scopes: undefined },
      { roles: [], scopes: [] },
    ]) {
      expect(e.evaluate(refund, refundArgs(1), withPrincipal(odd))).toEqual({ allowed: true });
    }
    expect(
      e.evaluate(refund, refundArgs(1), withPrincipal({ roles: [7, 'support'], scopes: [] })),
    ).toStrictEqual({
      allowed: false,
      ruleId: 'any-role',
      reason: 'refused by any-role',
    });
  });

  it('an argument named like an inherited property is absent unless given', () => {
    const odd = policyTool('odd_names', z.strictObject({ toString: z.string().optional(), n: z.int() }));
    const e = load({ cedar: forbid('n', 'odd_names', 'context.args.n > 5') }, [odd]);
    expect(e.evaluate(odd, { n: 1 }, support)).toEqual({ allowed: true });
    expect(e.evaluate(odd, { n: 6, toString: 'x' }, support)).toMatchObject({ ruleId: 'n' });
  });

  it('an argument given as undefined or null is absent', () => {
    const e = load({
      cedar: [
        forbid('note', 'issue_refund', 'context.args has note'),
        forbid('currency', 'issue_refund', 'context.args has currency'),
      ].join('\n'),
    });
    expect(e.evaluate(refund, refundArgs(1, { note: undefined, currency: null }), support)).toEqual({
      allowed: true,
    });
    expect(e.evaluate(refund, refundArgs(1, { currency: 'EUR' }), support)).toMatchObject({
      ruleId: 'currency',
    });
  });

  it('a policy without an action constraint governs every tool', () => {
    const e = load({
      cedar:
        '@id("blocked") @reason("r") forbid (principal, action, resource) when { principal.tenant == "blocked" };',
    });
    for (const [tool, args] of [
      [lookup, { order_id: 'O-1', weight: 1 }],
      [refund, refundArgs(1)],
      [purchaseOrder, po()],
    ] as const) {
      expect(e.evaluate(tool, args, as([], { tenant: 'blocked' }))).toMatchObject({ ruleId: 'blocked' });
      expect(e.evaluate(tool, args, support)).toEqual({ allowed: true });
    }
  });

  it('the versions of one tool share its action: an argument typed differently is left out, one only some have is optional', () => {
    const v1 = policyTool(
      'quote',
      z.strictObject({ amount: z.number(), currency: z.string(), v1_only: z.string() }),
      '1.0.0',
    );
    const v2 = policyTool(
      'quote',
      z.strictObject({ amount: z.string(), currency: z.string(), v2_only: z.int() }),
      '2.0.0',
    );
    const tools = [v1, v2];
    expect(loadError({ cedar: forbid('a', 'quote', 'context.args.amount == "1"') }, tools)).toMatch(
      /line 4, column 8: .*attribute `args.amount` .* not found/,
    );
    expect(loadError({ cedar: forbid('a', 'quote', 'context.args.v1_only == "x"') }, tools)).toContain(
      'optional attribute `args.v1_only`',
    );
    const e = load(
      {
        cedar: [
          forbid('currency', 'quote', 'context.args.currency == "XXX"'),
          forbid('v2', 'quote', 'context.args has v2_only && context.args.v2_only > 5'),
        ].join('\n'),
      },
      tools,
    );
    expect(e.evaluate(v1, { amount: 1.00001, currency: 'XXX', v1_only: 'a' }, support)).toMatchObject({
      ruleId: 'currency',
    });
    expect(e.evaluate(v2, { amount: 'one', currency: 'USD', v2_only: 6 }, support)).toMatchObject({
      ruleId: 'v2',
    });
    expect(e.evaluate(v2, { amount: 'one', currency: 'USD', v2_only: 5 }, support)).toEqual({
      allowed: true,
    });
    expect(e.factsOf('quote')).toEqual([]);
  });

  it('refuses a call with a value Cedar cannot hold rather than judge without it (fail closed)', () => {
    const e = load({
      cedar: [
        forbid('cap', 'issue_refund', 'context.args.amount.greaterThan(decimal("50.0"))'),
        forbid(
          'total',
          'create_purchase_order',
          'context.args has total && context.args.total.greaterThan(decimal("50.0"))',
        ),
        forbid(
          'qty',
          'create_purchase_order',
          'context.args has line_items && context.args.line_items.contains({sku: "X", quantity: 1})',
        ),
      ].join('\n'),
    });
    const refused = (tool: ToolDefinition, args: unknown, path: string, ruleId: string) => {
      const decision = e.evaluate(tool, args, support);
      expect(decision).toEqual(couldNotCheck(ruleId));
      expect(decision).toMatchObject({
        reason: expect.stringContaining(`(the rules cannot hold the exact value of ${path})`) as unknown,
      });
    };
    refused(refund, refundArgs(49.99999), 'amount', 'cap');
    refused(refund, refundArgs(Number.NaN), 'amount', 'cap');
    refused(refund, refundArgs(Number.POSITIVE_INFINITY), 'amount', 'cap');
    refused(refund, refundArgs(50, { roles: ['ok', 7] }), 'roles', 'cap');
    // Optional: left out, `has` would be false and the limit would pass.
    refused(purchaseOrder, po({ total: 60.00001 }), 'total', 'total');
    refused(purchaseOrder, po({ total: 1e300 }), 'total', 'total');
    refused(purchaseOrder, po({ total: '60' }), 'total', 'total');
    refused(purchaseOrder, po({ quantity: 2 ** 60 }), 'quantity', 'total');
    refused(
      purchaseOrder,
      po({
        line_items: [
          { sku: 'X', quantity: 1 },
          { sku: 'Y', quantity: 0.5 },
        ],
      }),
      'line_items.1.quantity',
      'total',
    );
    refused(purchaseOrder, po({ shipping: { country: 7 } }), 'shipping.country', 'total');
    refused(purchaseOrder, po({ total: 0.00001, quantity: 1.5 }), 'total, quantity', 'total');
    refused(purchaseOrder, 'not an object', 'the arguments', 'total');
    expect(
      e.evaluate(
        purchaseOrder,
        po({ total: 49.9999, shipping: { country: 'DE', zip: null }, sku: null }),
        support,
      ),
    ).toEqual({
      allowed: true,
    });
    expect(
      e.evaluate(purchaseOrder, po({ extra: 1e-9, shipping: { country: 'DE', extra: 1e-9 } }), support),
    ).toEqual({
      allowed: true,
    });
    expect(e.evaluate(purchaseOrder, po({ line_items: [{ sku: 'X', quantity: 2 }] }), support)).toEqual({
      allowed: true,
    });
  });

  it('refuses a call whose required arguments are missing, naming the first rule of the tool', () => {
    const e = load({
      cedar: [
        forbid('a', 'issue_refund', 'context.args.amount.greaterThan(decimal("50.0"))'),
        forbid('b', 'issue_refund', 'false'),
      ].join('\n'),
    });
    const decision = e.evaluate(refund, { order_id: 'O-1' }, support);
    expect(decision).toEqual(couldNotCheck('a'));
    expect(decision).toMatchObject({ reason: expect.stringContaining('`amount`') as unknown });
  });

  it("refuses to load a rule named like the engine's own base policy, or an empty alternative", () => {
    expect(
      loadError({
        cedar: forbid('toolgate-base', 'issue_refund', 'context.args.amount.greaterThan(decimal("50.0"))'),
      }),
    ).toMatch(/line 1, column 1: @id\("toolgate-base"\) is reserved/);
    const empty = `@id("e")\n@reason("r")\n@alternative("")\nforbid (principal, action == Toolgate::Action::"issue_refund", resource) when { context.args.amount.greaterThan(decimal("50.0")) };`;
    expect(loadError({ cedar: empty })).toMatch(/line 1, column 1: @alternative\(""\) offers nothing/);
  });

  it('a "*" rule binding several tools loads as one policy with one id, and binds each of them', () => {
    // issue_refund and lookup_order both have order_id; create_purchase_order does not.
    const e = load({
      rules: [
        {
          id: 'frozen-order',
          tool: '*',
          field: 'order_id',
          check: { noneOf: ['O-666'] },
          reason: '{value} is frozen',
        },
      ],
    });
    const frozen = { allowed: false, ruleId: 'frozen-order', reason: 'O-666 is frozen' };
    expect(e.evaluate(refund, { order_id: 'O-666', amount: 1 }, support)).toStrictEqual(frozen);
    expect(e.evaluate(lookup, { order_id: 'O-666', weight: 1 }, support)).toStrictEqual(frozen);
    expect(e.evaluate(lookup, { order_id: 'O-1', weight: 1 }, support)).toEqual({ allowed: true });
    expect(e.evaluate(purchaseOrder, po({}), support)).toEqual({ allowed: true });
    expect(e.argumentsRead?.('lookup_order')).toEqual(new Set(['order_id']));
  });

  it('two engines in one process keep their own rules', () => {
    const strict = load({
      cedar: forbid('strict', 'issue_refund', 'context.args.amount.greaterThan(decimal("10.0"))'),
    });
    const lax = load({
      cedar: forbid('lax', 'issue_refund', 'context.args.amount.greaterThan(decimal("100.0"))'),
    });
    expect(strict.evaluate(refund, refundArgs(50), support)).toMatchObject({ ruleId: 'strict' });
    expect(lax.evaluate(refund, refundArgs(50), support)).toEqual({ allowed: true });
    expect(strict.evaluate(refund, refundArgs(500), support)).toMatchObject({ ruleId: 'strict' });
    expect(lax.evaluate(refund, refundArgs(500), support)).toMatchObject({ ruleId: 'lax' });
  });

  it('Cedar and JSON rules together: the Cedar text first', () => {
    const e = load({
      cedar: forbid('cedar-cap', 'issue_refund', 'context.args.amount.greaterThan(decimal("100.0"))'),
      rules: [amountRule('json-cap', { max: 50 }, 'json {value}')],
    });
    expect(e.evaluate(refund, refundArgs(60), support)).toMatchObject({
      ruleId: 'json-cap',
      reason: 'json 60',
    });
    expect(e.evaluate(refund, refundArgs(160), support)).toMatchObject({ ruleId: 'cedar-cap' });
  });
});

describe('createPolicyEngine: the arguments the rules read', () => {
  it('names the top-level arguments each tool\'s rules read, through `.`, `[""]` and `has`', () => {
    const e = load({
      facts: [
        { name: 'ordered', tools: ['create_purchase_order'], measure: { count: true }, per: [], windowMs: 1 },
      ],
      cedar: [
        forbid('amount', 'issue_refund', 'context.args.amount.greaterThan(decimal("50.0"))'),
        forbid('note', 'issue_refund', 'context.args has note && context.args["note"] like "*x*"'),
        forbid(
          'zip',
          'create_purchase_order',
          'context.args has shipping.zip && context.args.shipping.zip == "1"',
        ),
        forbid(
          'tags',
          'create_purchase_order',
          'context.args has tags && context.args.tags.containsAny(["a", "b"])',
        ),
        forbid('not-args', 'create_purchase_order', 'context has args && principal.tenant == "t9"'),
        forbid('facts', 'create_purchase_order', 'context.facts.ordered > 9'),
      ].join('\n'),
    });
    expect(e.argumentsRead?.('issue_refund')).toEqual(new Set(['amount', 'note']));
    expect(e.argumentsRead?.('create_purchase_order')).toEqual(new Set(['shipping', 'tags']));
    expect(e.argumentsRead?.('lookup_order')).toEqual(new Set());
    expect(e.argumentsRead?.('no_such_tool')).toEqual(new Set());
  });

  it('counts a rule for every tool, and JSON rules by their field', () => {
    const e = load({
      cedar:
        '@id("all-tools") @reason("r") forbid (principal, action, resource) when { context has args && context.args has sku && context.args.sku == "X" };',
      rules: [
        {
          id: 'country',
          tool: 'create_purchase_order',
          field: 'shipping.country',
          check: { oneOf: ['DE'] },
          reason: 'r',
        },
      ],
    });
    expect(e.argumentsRead?.('create_purchase_order')).toEqual(new Set(['sku', 'shipping']));
    expect(e.argumentsRead?.('issue_refund')).toEqual(new Set(['sku']));
  });

  it('is `all` for a tool one of whose rules reads the arguments whole', () => {
    const e = load({
      cedar: [
        forbid('amount', 'issue_refund', 'context.args.amount.greaterThan(decimal("50.0"))'),
        forbid('whole', 'issue_refund', 'context.args == context.args'),
        forbid('qty', 'create_purchase_order', 'context.args has quantity && context.args.quantity > 3'),
      ].join('\n'),
    });
    expect(e.argumentsRead?.('issue_refund')).toBe('all');
    expect(e.argumentsRead?.('create_purchase_order')).toEqual(new Set(['quantity']));
  });
});

describe('createPolicyEngine: aggregate facts', () => {
  const FACTS: AggregateFact[] = [
    {
      name: 'refunded',
      tools: ['issue_refund'],
      measure: { sum: 'amount' },
      per: ['resourceKey'],
      windowMs: 1000,
    },
    {
      name: 'refunds',
      tools: ['issue_refund'],
      measure: { count: true },
      per: ['principal'],
      windowMs: 1000,
    },
    {
      name: 'ordered',
      tools: ['create_purchase_order'],
      measure: { count: true },
      per: ['principal'],
      windowMs: 1000,
    },
  ];
  let built: PolicyEngine | undefined;
  const e = () =>
    (built ??= load({
      facts: FACTS,
      cedar: [
        forbid('total', 'issue_refund', 'context.facts.refunded.greaterThan(decimal("50.0"))', {
          reason: 'this would make {facts.refunded} in {facts.refunds} refunds',
        }),
        forbid('count', 'issue_refund', 'context.facts.refunds > 3', {
          reason: 'refund {facts.refunds} at {facts.refunded}',
        }),
        forbid('negative', 'issue_refund', 'context.facts.refunded.lessThan(decimal("-1.0"))', {
          reason: '{facts.refunded}',
        }),
      ].join('\n'),
    }));
  const decide = (values?: Record<string, number>) => e().evaluate(refund, refundArgs(1), support, values);

  it('tells which facts the rules of a tool read', () => {
    expect(
      e()
        .factsOf('issue_refund')
        .map((f) => f.name),
    ).toEqual(['refunded', 'refunds']);
    expect(
      e()
        .factsOf('create_purchase_order')
        .map((f) => f.name),
    ).toEqual(['ordered']);
    expect(e().factsOf('lookup_order')).toEqual([]);
    expect(e().factsOf('no_such_tool')).toEqual([]);
    expect(e().factsOf('issue_refund')[0]).toEqual(FACTS[0]);
  });

  it('takes sums as units of 10^-4 and compares them exactly; counts as Longs', () => {
    expect(decide({ refunded: 500_000, refunds: 3 })).toEqual({ allowed: true });
    expect(decide({ refunded: 500_001, refunds: 1 })).toStrictEqual({
      allowed: false,
      ruleId: 'total',
      reason: 'this would make 50.0001 in 1 refunds',
    });
    expect(decide({ refunded: 500_100, refunds: 2 })).toMatchObject({
      reason: 'this would make 50.01 in 2 refunds',
    });
    expect(decide({ refunded: 1_000_000, refunds: 2 })).toMatchObject({
      reason: 'this would make 100 in 2 refunds',
    });
    expect(decide({ refunded: 499_900, refunds: 4 })).toStrictEqual({
      allowed: false,
      ruleId: 'count',
      reason: 'refund 4 at 49.99',
    });
    expect(decide({ refunded: 5_000, refunds: 4 })).toMatchObject({ reason: 'refund 4 at 0.5' });
    expect(decide({ refunded: 100_500, refunds: 4 })).toMatchObject({ reason: 'refund 4 at 10.05' });
    expect(decide({ refunded: 0, refunds: 4 })).toMatchObject({ reason: 'refund 4 at 0' });
    expect(decide({ refunded: -10_001, refunds: 0 })).toMatchObject({
      ruleId: 'negative',
      reason: '-1.0001',
    });
    expect(decide({ refunded: -10_000, refunds: 0 })).toEqual({ allowed: true });
  });

  it('refuses when a fact it reads is not given or cannot be read (fail closed)', () => {
    expect(decide({ refunds: 1 })).toEqual(couldNotCheck('total'));
    expect(decide({ refunds: 1 })).toMatchObject({
      reason: expect.stringContaining('`refunded`') as unknown,
    });
    expect(decide({ refunded: 1 })).toEqual(couldNotCheck('total'));
    expect(decide({})).toEqual(couldNotCheck('total'));
    expect(decide()).toEqual(couldNotCheck('total'));
    expect(decide({ refunded: 1.5, refunds: 1 })).toEqual(couldNotCheck('total'));
    expect(decide({ refunded: 1, refunds: 1.5 })).toEqual(couldNotCheck('total'));
    // Another tool's facts are not its own.
    expect(decide({ ordered: 1, refunds: 1 })).toEqual(couldNotCheck('total'));
  });
});

describe('parsePolicyRules', () => {
  it('loads rules from JSON', () => {
    const json = JSON.stringify(RULES);
    expect(parsePolicyRules(JSON.parse(json))).toEqual(RULES);
  });

  it.each([
    ['an unknown key', [{ ...RULES[1], typo: 1 }]],
    ['two check kinds', [{ ...RULES[1], check: { max: 1, min: 0 } }]],
    ['an unknown check', [{ ...RULES[1], check: { between: [1, 2] } }]],
    ['an empty path segment', [{ ...RULES[1], field: 'a..b' }]],
    ['a missing reason', [{ ...RULES[1], reason: undefined }]],
    ['duplicate ids', [RULES[1], RULES[1]]],
    ['not an array', { rules: RULES }],
  ])('refuses %s', (_label, data) => {
    expect(() => parsePolicyRules(data)).toThrow(PolicyRulesError);
    expect(() => load({ rules: data as PolicyRule[] })).toThrow(/^Invalid policy rules:/);
  });
});

describe('readPath', () => {
  it('follows own properties only', () => {
    expect(readPath({ a: { b: [10, 20] } }, 'a.b.1')).toBe(20);
    expect(readPath({ a: 1 }, 'constructor')).toBeUndefined();
    expect(readPath({ a: 1 }, 'a.toString')).toBeUndefined();
    expect(readPath(null, 'a')).toBeUndefined();
  });
});
