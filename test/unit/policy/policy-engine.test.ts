import { describe, expect, it } from 'vitest';
import {
  createPolicyEngine,
  parsePolicyRules,
  PolicyRulesError,
  readPath,
} from '../../../libs/policy/index.js';
import type { PolicyRule } from '../../../libs/policy/index.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { context, principal } from '../pipeline/fixtures.js';

const tool = (name: string) => ({ name }) as ToolDefinition;
const refund = tool('issue_refund');
const support = context();
const manager = context({ principal: principal({ roles: ['manager'] }) });

/** A rule `id` on issue_refund's amount; `more` adds a `when` or an alternative. */
const amountRule = (
  id: string,
  check: PolicyRule['check'],
  reason: string,
  more: Partial<PolicyRule> = {},
): PolicyRule => ({ id, tool: 'issue_refund', field: 'amount', check, reason, ...more });

const RULES: PolicyRule[] = [
  amountRule(
    'support-refund-limit',
    { max: 50 },
    'Refunds above ${limit} need a manager. Split it or route it to a manager.',
    {
      when: { roles: ['support'] },
      alternative: 'Split the refund into parts of at most $50, or route it to a manager.',
    },
  ),
  amountRule('global-refund-cap', { max: 1000 }, 'No refund may exceed ${limit}; {value} was asked.'),
  {
    id: 'currency',
    tool: 'issue_refund',
    field: 'currency',
    check: { oneOf: ['USD', 'EUR'] },
    reason: 'Currency {value} is not supported; use one of {limit}.',
  },
];

describe('createPolicyEngine', () => {
  const engine = createPolicyEngine(RULES, 'v7');

  it('allows calls within every applicable rule', () => {
    expect(engine.version).toBe('v7');
    expect(engine.evaluate(refund, { amount: 49.99, currency: 'USD' }, support)).toEqual({ allowed: true });
  });

  it('support may refund at most $50, with an actionable reason and an alternative', () => {
    expect(engine.evaluate(refund, { amount: 75 }, support)).toEqual({
      allowed: false,
      ruleId: 'support-refund-limit',
      reason: 'Refunds above $50 need a manager. Split it or route it to a manager.',
      alternative: 'Split the refund into parts of at most $50, or route it to a manager.',
    });
  });

  it('role-scoped rules apply only to principals holding one of the roles', () => {
    expect(engine.evaluate(refund, { amount: 75 }, manager)).toEqual({ allowed: true });
    const both = context({ principal: principal({ roles: ['manager', 'support'] }) });
    expect(engine.evaluate(refund, { amount: 75 }, both)).toMatchObject({
      allowed: false,
      ruleId: 'support-refund-limit',
    });
  });

  it('the first violated rule in array order wins', () => {
    // 5000 violates both the support limit and the global cap; the support rule comes first.
    expect(engine.evaluate(refund, { amount: 5000, currency: 'GBP' }, support)).toMatchObject({
      ruleId: 'support-refund-limit',
    });
    expect(engine.evaluate(refund, { amount: 5000, currency: 'GBP' }, manager)).toEqual({
      allowed: false,
      ruleId: 'global-refund-cap',
      reason: 'No refund may exceed $1000; 5000 was asked.',
    });
    const reordered = createPolicyEngine([RULES[2]!, RULES[1]!, RULES[0]!], 'v8');
    expect(reordered.evaluate(refund, { amount: 5000, currency: 'GBP' }, support)).toMatchObject({
      ruleId: 'currency',
      reason: 'Currency GBP is not supported; use one of USD, EUR.',
    });
  });

  it('rules of other tools do not apply; "*" applies to every tool', () => {
    const other = tool('create_purchase_order');
    expect(engine.evaluate(other, { amount: 5000 }, support)).toEqual({ allowed: true });
    const everywhere = createPolicyEngine(
      [
        {
          id: 'no-test-skus',
          tool: '*',
          field: 'sku',
          check: { noneOf: ['TEST-1'] },
          reason: 'SKU {value} is blocked.',
        },
      ],
      'v1',
    );
    expect(everywhere.evaluate(other, { sku: 'TEST-1' }, support)).toMatchObject({
      allowed: false,
      reason: 'SKU TEST-1 is blocked.',
    });
    expect(everywhere.evaluate(other, { sku: 'REAL-1' }, support)).toEqual({ allowed: true });
  });

  it('a rule for several roles applies when the principal has any one of them', () => {
    const e = createPolicyEngine(
      [amountRule('junior-cap', { max: 20 }, 'cap', { when: { roles: ['support', 'intern'] } })],
      'v1',
    );
    const intern = context({ principal: principal({ roles: ['intern'] }) });
    expect(e.evaluate(refund, { amount: 30 }, intern)).toMatchObject({
      allowed: false,
      ruleId: 'junior-cap',
    });
    expect(e.evaluate(refund, { amount: 30 }, manager)).toEqual({ allowed: true });
    const noRoles = context({ principal: principal({ roles: [] }) });
    expect(e.evaluate(refund, { amount: 30 }, noRoles)).toEqual({ allowed: true });
  });

  it('tenant-scoped rules apply only in those tenants', () => {
    const e = createPolicyEngine(
      [amountRule('t2-cap', { max: 10 }, 'cap', { when: { tenants: ['t2'] } })],
      'v1',
    );
    expect(e.evaluate(refund, { amount: 20 }, support)).toEqual({ allowed: true });
    const inT2 = context({ tenant: 't2', principal: principal({ tenant: 't2' }) });
    expect(e.evaluate(refund, { amount: 20 }, inT2)).toMatchObject({ allowed: false });
  });

  it('reads roles from the verified principal, never from the arguments', () => {
    expect(
      engine.evaluate(refund, { amount: 75, role: 'manager', roles: ['manager'] }, support),
    ).toMatchObject({
      allowed: false,
    });
  });

  it('checks min, maxItems and nested paths; absent fields are not checked', () => {
    const e = createPolicyEngine(
      [
        { id: 'min', tool: 'po', field: 'total', check: { min: 1 }, reason: 'total {value} below {limit}' },
        {
          id: 'items',
          tool: 'po',
          field: 'line_items',
          check: { maxItems: 2 },
          reason: '{value} items, max {limit}',
        },
        {
          id: 'qty',
          tool: 'po',
          field: 'line_items.0.quantity',
          check: { max: 500 },
          reason: 'qty {value} > {limit}',
        },
      ],
      'v1',
    );
    const po = tool('po');
    expect(e.evaluate(po, {}, support)).toEqual({ allowed: true });
    expect(e.evaluate(po, { total: 0.5 }, support)).toMatchObject({ reason: 'total 0.5 below 1' });
    expect(e.evaluate(po, { line_items: [{}, {}, {}] }, support)).toMatchObject({ reason: '3 items, max 2' });
    expect(e.evaluate(po, { line_items: [{ quantity: 3000 }] }, support)).toMatchObject({
      reason: 'qty 3000 > 500',
    });
  });

  it('fails closed on values a check cannot compare', () => {
    expect(engine.evaluate(refund, { amount: '20' }, manager)).toMatchObject({ ruleId: 'global-refund-cap' });
    expect(engine.evaluate(refund, { amount: Number.NaN }, manager)).toMatchObject({
      ruleId: 'global-refund-cap',
    });
    expect(engine.evaluate(refund, { amount: 5, currency: { code: 'USD' } }, manager)).toMatchObject({
      ruleId: 'currency',
    });
  });

  it('does not expand placeholders found inside the model value', () => {
    expect(engine.evaluate(refund, { amount: 5, currency: '{limit}' }, manager)).toMatchObject({
      reason: 'Currency {limit} is not supported; use one of USD, EUR.',
    });
  });

  it('is immune to later changes of the rule array it was built from', () => {
    const rules = structuredClone(RULES);
    const e = createPolicyEngine(rules, 'v1');
    (rules[0]!.check as { max: number }).max = 10_000;
    rules.length = 0;
    expect(e.evaluate(refund, { amount: 75 }, support)).toMatchObject({ allowed: false });
  });
});

describe('createPolicyEngine: the refusal text', () => {
  const show = (check: PolicyRule['check'], reason = 'got {value}, limit {limit}') =>
    createPolicyEngine([{ id: 'r', tool: '*', field: 'v', check, reason }], 'v1');
  const reasonFor = (check: PolicyRule['check'], v: unknown) => {
    const decision = show(check).evaluate(refund, { v }, support);
    return decision.allowed ? undefined : decision.reason;
  };

  it('shows a value of up to 60 characters as it is, and cuts a longer one with a visible mark', () => {
    const sixty = 'x'.repeat(60);
    expect(reasonFor({ oneOf: ['ok'] }, sixty)).toBe(`got ${sixty}, limit ok`);
    expect(reasonFor({ oneOf: ['ok'] }, `${sixty}y`)).toBe(`got ${sixty}…, limit ok`);
  });

  it('shows a number JSON cannot hold as JavaScript writes it', () => {
    expect(reasonFor({ max: 1 }, Number.NaN)).toBe('got NaN, limit 1');
    expect(reasonFor({ min: 1 }, Number.NEGATIVE_INFINITY)).toBe('got -Infinity, limit 1');
  });

  it('a context without a principal holds no roles', () => {
    const rules: PolicyRule[] = [
      { id: 'r', tool: '*', when: { roles: ['support'] }, field: 'v', check: { max: 1 }, reason: 'no' },
    ];
    const ctx = { ...support, principal: undefined } as unknown as typeof support;
    expect(createPolicyEngine(rules, 'v1').evaluate(refund, { v: 2 }, ctx)).toEqual({ allowed: true });
  });

  it('shows numbers, booleans and structured values as JSON would', () => {
    expect(reasonFor({ max: 1 }, 2.5)).toBe('got 2.5, limit 1');
    expect(reasonFor({ oneOf: [true] }, false)).toBe('got false, limit true');
    expect(reasonFor({ oneOf: ['USD'] }, { code: 'EUR' })).toBe('got {"code":"EUR"}, limit USD');
    expect(reasonFor({ maxItems: 1 }, ['a', 'b'])).toBe('got 2, limit 1');
  });

  it('shows a value JSON cannot encode without failing', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(reasonFor({ oneOf: ['USD'] }, cyclic)).toBe('got [object Object], limit USD');
  });

  it('fills every placeholder, and names the rule; no alternative means none is offered', () => {
    const engine = show({ max: 1 }, '{value} > {limit}; again {value} > {limit}');
    const decision = engine.evaluate(refund, { v: 3 }, support);
    expect(decision).toStrictEqual({ allowed: false, ruleId: 'r', reason: '3 > 1; again 3 > 1' });
  });

  it('does not check an absent or null field, and checks a falsy one', () => {
    const engine = show({ oneOf: ['ok'] });
    expect(engine.evaluate(refund, {}, support)).toEqual({ allowed: true });
    expect(engine.evaluate(refund, { v: null }, support)).toEqual({ allowed: true });
    expect(engine.evaluate(refund, { v: 0 }, support)).toMatchObject({ allowed: false });
    expect(engine.evaluate(refund, { v: '' }, support)).toMatchObject({ allowed: false });
  });

  it('carries the version it was built with, and refuses one that is not a non-empty string', () => {
    expect(show({ max: 1 }).version).toBe('v1');
    expect(() => createPolicyEngine(RULES, 7 as unknown as string)).toThrow(
      new PolicyRulesError('A policy version must be a non-empty string.'),
    );
  });

  it('ignores roles that are not strings, and a principal without roles', () => {
    const rules: PolicyRule[] = [
      { id: 'r', tool: '*', when: { roles: ['support'] }, field: 'v', check: { max: 1 }, reason: 'no' },
    ];
    const engine = createPolicyEngine(rules, 'v1');
    const odd = context({ principal: { ...principal(), roles: [7, 'support'] as unknown as string[] } });
    expect(engine.evaluate(refund, { v: 2 }, odd)).toMatchObject({ allowed: false });
    const none = context({ principal: { ...principal(), roles: undefined as unknown as string[] } });
    expect(engine.evaluate(refund, { v: 2 }, none)).toEqual({ allowed: true });
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
  });

  it('refuses an empty version', () => {
    expect(() => createPolicyEngine(RULES, '')).toThrow(PolicyRulesError);
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
