import { describe, expect, it } from 'vitest';
import {
  aggregateFactSchema,
  contributionsOf,
  factSeries,
  factText,
  isCount,
} from '../../../libs/policy/aggregate-fact.js';
import type { AggregateFact, FactSeries } from '../../../libs/policy/index.js';
import { as } from './policy-tools.js';

const refunded: AggregateFact = {
  name: 'refunded',
  tools: ['issue_refund'],
  measure: { sum: 'amount' },
  per: ['resourceKey'],
  windowMs: 30_000,
};
const refunds: AggregateFact = { ...refunded, name: 'refunds', measure: { count: true } };

const call = (args: unknown, more: { tool?: string; resourceKey?: string } = {}) => ({
  tool: more.tool ?? 'issue_refund',
  args,
  resourceKey: more.resourceKey ?? 't1:order:O-1',
  contributionId: 'key-1',
});

const support = as(['support'], { id: 'agent-1' });

describe('factSeries: the series a call reads and adds to', () => {
  it('names the series by the fact and its groups, always per tenant', () => {
    const series = factSeries(refunded, call({ amount: 1 }), support);
    expect(series.fact).toBe(refunded);
    expect(series.query).toEqual({
      key: 'refunded|["t1","t1:order:O-1"]',
      windowMs: 30_000,
      exceptCallId: 'key-1',
    });
    const all: AggregateFact = {
      ...refunded,
      per: ['principal', 'tool', 'args.customer_id', 'args.shipping.country', 'resourceKey'],
    };
    const args = { amount: 1, customer_id: 'C-9', shipping: { country: 'DE' } };
    expect(factSeries(all, call(args), support).query.key).toBe(
      'refunded|["t1","agent-1","issue_refund","C-9","DE","t1:order:O-1"]',
    );
    expect(factSeries({ ...refunded, per: [] }, call(args), support).query.key).toBe('refunded|["t1"]');
  });

  it('an absent argument groups as null; a structured one as its JSON', () => {
    const byCustomer: AggregateFact = { ...refunded, per: ['args.customer_id'] };
    expect(factSeries(byCustomer, call({ amount: 1 }), support).query.key).toBe('refunded|["t1",null]');
    expect(factSeries(byCustomer, call({ amount: 1, customer_id: null }), support).query.key).toBe(
      'refunded|["t1",null]',
    );
    expect(factSeries(byCustomer, call({ amount: 1, customer_id: 7 }), support).query.key).toBe(
      'refunded|["t1",7]',
    );
    expect(factSeries(byCustomer, call({ amount: 1, customer_id: '7' }), support).query.key).toBe(
      'refunded|["t1","7"]',
    );
    expect(factSeries(byCustomer, call({ amount: 1, customer_id: { id: 'C-1' } }), support).query.key).toBe(
      'refunded|["t1",{"id":"C-1"}]',
    );
  });

  it('different tenants, principals, tools, resources or facts read different series', () => {
    const perEverything: AggregateFact = { ...refunded, per: ['principal', 'tool', 'resourceKey'] };
    const key = (fact: AggregateFact, ctx = support, more: { tool?: string; resourceKey?: string } = {}) =>
      factSeries(fact, call({ amount: 1 }, more), ctx).query.key;
    const keys = [
      key(perEverything),
      key(perEverything, as(['support'], { id: 'agent-1', tenant: 't2' })),
      key(perEverything, as(['support'], { id: 'agent-2' })),
      key(perEverything, support, { tool: 'other_refund' }),
      key(perEverything, support, { resourceKey: 't1:order:O-2' }),
      key({ ...perEverything, name: 'refunded2' }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
    // Per resource key only: the same series whoever calls, as long as the tenant is the same.
    expect(key(refunded, as(['manager'], { id: 'someone-else' }))).toBe(key(refunded));
    expect(key(refunded, as([], { tenant: 't2' }))).not.toBe(key(refunded));
  });

  it('a value cannot pass for another group by looking like the separator', () => {
    const byTwo: AggregateFact = { ...refunded, per: ['args.a', 'args.b'] };
    const a = factSeries(byTwo, call({ a: 'x","y', b: 'z' }), support).query.key;
    const b = factSeries(byTwo, call({ a: 'x', b: 'y","z' }), support).query.key;
    expect(a).not.toBe(b);
  });
});

describe("factSeries: the call's own units", () => {
  const own = (fact: AggregateFact, args: unknown, ctx = support) => factSeries(fact, call(args), ctx).own;

  it('a sum counts the argument in units of 10^-4; a count counts 1', () => {
    expect(own(refunded, { amount: 49.99 })).toBe(499_900);
    expect(own(refunded, { amount: -0.0001 })).toBe(-1);
    expect(own(refunded, { amount: 0 })).toBe(0);
    expect(own({ ...refunded, measure: { sum: 'line.total' } }, { line: { total: 2.5 } })).toBe(25_000);
    expect(own(refunds, { amount: 49.99 })).toBe(1);
    expect(own(refunds, {})).toBe(1);
  });

  it('a sum it cannot compute is undefined: absent, not a number, or not representable', () => {
    expect(own(refunded, {})).toBeUndefined();
    expect(own(refunded, { amount: '49.99' })).toBeUndefined();
    expect(own(refunded, { amount: null })).toBeUndefined();
    expect(own(refunded, { amount: 49.99999 })).toBeUndefined();
    expect(own(refunded, { amount: 1e300 })).toBeUndefined();
    expect(own(refunded, { amount: Number.NaN })).toBeUndefined();
    expect(own(refunded, undefined)).toBeUndefined();
  });

  it('counts only calls whose principal has ANY of by.roles and NONE of by.exceptRoles', () => {
    const bySupport: AggregateFact = { ...refunded, by: { roles: ['support', 'intern'] } };
    expect(own(bySupport, { amount: 5 }, as(['support']))).toBe(50_000);
    expect(own(bySupport, { amount: 5 }, as(['manager', 'intern']))).toBe(50_000);
    expect(own(bySupport, { amount: 5 }, as(['manager']))).toBe(0);
    expect(own(bySupport, { amount: 5 }, as([]))).toBe(0);
    // A principal that does not count adds 0 even when its own amount could not be computed.
    expect(own(bySupport, { amount: 49.99999 }, as(['manager']))).toBe(0);
    expect(own({ ...refunds, by: { roles: ['support'] } }, {}, as(['manager']))).toBe(0);

    const exceptManagers: AggregateFact = { ...refunded, by: { exceptRoles: ['manager', 'owner'] } };
    expect(own(exceptManagers, { amount: 5 }, as(['support']))).toBe(50_000);
    expect(own(exceptManagers, { amount: 5 }, as([]))).toBe(50_000);
    expect(own(exceptManagers, { amount: 5 }, as(['support', 'owner']))).toBe(0);

    const both: AggregateFact = { ...refunded, by: { roles: ['support'], exceptRoles: ['manager'] } };
    expect(own(both, { amount: 5 }, as(['support']))).toBe(50_000);
    expect(own(both, { amount: 5 }, as(['support', 'manager']))).toBe(0);
    expect(own(both, { amount: 5 }, as(['manager']))).toBe(0);
  });

  it('a principal without roles counts only where no role is required', () => {
    const noRoles = {
      ...support,
      principal: { ...support.principal, roles: undefined },
    } as unknown as typeof support;
    expect(own(refunded, { amount: 1 }, noRoles)).toBe(10_000);
    expect(own({ ...refunded, by: { exceptRoles: ['manager'] } }, { amount: 1 }, noRoles)).toBe(10_000);
    expect(own({ ...refunded, by: { roles: ['support'] } }, { amount: 1 }, noRoles)).toBe(0);
  });
});

describe('contributionsOf', () => {
  const series = (key: string, own: number | undefined, windowMs = 1000, id = 'key-1'): FactSeries => ({
    fact: refunded,
    query: { key, windowMs, exceptCallId: id },
    own,
  });

  it('adds the call to every series it counts in, under the id it read them without, skipping 0 and undefined', () => {
    expect(
      contributionsOf(
        [
          series('a', 499_900, 10),
          series('b', 0),
          series('c', undefined),
          series('d', -5, 20, 'key-2'),
          series('e', 1),
        ],
        1234,
      ),
    ).toEqual([
      { key: 'a', callId: 'key-1', units: 499_900, atMs: 1234, windowMs: 10 },
      { key: 'd', callId: 'key-2', units: -5, atMs: 1234, windowMs: 20 },
      { key: 'e', callId: 'key-1', units: 1, atMs: 1234, windowMs: 1000 },
    ]);
    expect(contributionsOf([], 0)).toEqual([]);
  });
});

describe('factText', () => {
  it('writes sums as decimal text and counts as integers', () => {
    expect(factText(refunded, 499_900)).toBe('49.9900');
    expect(factText(refunded, -5)).toBe('-0.0005');
    expect(factText(refunded, 0)).toBe('0.0000');
    expect(factText(refunds, 3)).toBe('3');
    expect(isCount(refunds)).toBe(true);
    expect(isCount(refunded)).toBe(false);
  });
});

describe('aggregateFactSchema', () => {
  it('accepts the documented shapes', () => {
    for (const fact of [
      refunded,
      refunds,
      {
        ...refunded,
        per: ['principal', 'tool', 'args.a.b'],
        by: { roles: ['support'], exceptRoles: ['manager'] },
      },
      { ...refunded, name: '_x1' },
    ]) {
      expect(aggregateFactSchema.safeParse(fact).success).toBe(true);
    }
  });

  it.each([
    ['a name that is not a Cedar identifier', { name: 'refunded-30d' }],
    ['a name starting with a digit', { name: '1x' }],
    ['a name starting with __', { name: '__x' }],
    ['no tools', { tools: [] }],
    ['an empty tool name', { tools: [''] }],
    ['two measures', { measure: { sum: 'amount', count: true } }],
    ['an empty sum', { measure: { sum: '' } }],
    ['a count that is not true', { measure: { count: false } }],
    ['an unknown dimension', { per: ['customer'] }],
    ['an args dimension without a path', { per: ['args.'] }],
    ['an args dimension with an empty segment', { per: ['args.a..b'] }],
    ['a window that is not positive', { windowMs: 0 }],
    ['a fractional window', { windowMs: 1.5 }],
    ['an empty role list', { by: { roles: [] } }],
    ['an empty role', { by: { exceptRoles: [''] } }],
    ['an unknown by key', { by: { role: 'support' } }],
    ['an unknown key', { typo: 1 }],
  ])('refuses %s', (_label, change) => {
    expect(aggregateFactSchema.safeParse({ ...refunded, ...change }).success).toBe(false);
  });
});
