import { describe, expect, it } from 'vitest';
import { didYouMean, suggestNames } from '../../../libs/registry/did-you-mean.js';
import type { ResolveResult } from '../../../libs/registry/tool-registry.js';
import { registryOf } from './registry-fixtures.js';
import { sampleTools } from './sample-tools.js';

const catalog = ['issue_refund', 'lookup_order', 'update_inventory', 'search_orders', 'refund_status'];

function errorOf(result: ResolveResult) {
  if (result.ok) throw new Error('expected a refusal');
  return result.error;
}

describe('suggestNames', () => {
  it.each([
    ['isue_refund', ['issue_refund']],
    ['issueRefund', ['issue_refund']],
    ['ISSUE-REFUND', ['issue_refund']],
    ['lookup_ordr', ['lookup_order']],
    ['lookup_orders', ['lookup_order']],
    ['refund', ['issue_refund', 'refund_status']],
    ['get_weather', []],
    ['', []],
  ])('%s → %j', (query, expected) => {
    expect(suggestNames(query, catalog)).toEqual(expected);
  });

  it('ranks separator-insensitive equality before substrings before edits, and caps the list', () => {
    const names = ['order', 'orders', 'order_s', 'ordr', 'border_x'];
    expect(suggestNames('Orders', names, 2)).toEqual(['order_s', 'orders']);
    expect(suggestNames('x'.repeat(500), ['x'.repeat(64)])).toEqual([]);
  });

  it('does not suggest the name itself', () => {
    expect(suggestNames('issue_refund', ['issue_refund'])).toEqual([]);
  });
});

describe('didYouMean', () => {
  it('phrases zero, one and several suggestions', () => {
    expect(didYouMean([])).toBe('');
    expect(didYouMean(['a'])).toBe("Did you mean 'a'?");
    expect(didYouMean(['a', 'b'])).toBe("Did you mean 'a' or 'b'?");
    expect(didYouMean(['a', 'b', 'c'])).toBe("Did you mean 'a', 'b' or 'c'?");
  });
});

describe('ToolRegistry unknown-tool messages', () => {
  function registry() {
    const s = sampleTools();
    const r = registryOf(s.issueRefundV2, s.lookupOrder);
    r.register(s.updateInventory, { tenants: ['t2'] });
    return r;
  }

  it('names the closest tool', () => {
    const error = errorOf(registry().resolve('isue_refund', { tenant: 't1' }));
    expect(error.code).toBe('UNKNOWN_TOOL');
    expect(error.message).toBe("Unknown tool 'isue_refund'. Did you mean 'issue_refund'?");
    expect(error.suggestedFix).toBe("Call 'issue_refund' instead, with its own arguments.");
    expect(error.retryable).toBe(true);
  });

  it("never suggests, or resolves, another tenant's tool", () => {
    const r = registry();
    const hidden = errorOf(r.resolve('update_inventory', { tenant: 't1' }));
    expect(hidden.message).toBe(
      "Unknown tool 'update_inventory'. No similar tool is available; use one of the tools you were given.",
    );
    expect(errorOf(r.resolve('update_inventry', { tenant: 't1' })).message).not.toContain('update_inventory');
    expect(errorOf(r.resolve('update_inventry', { tenant: 't2' })).message).toBe(
      "Unknown tool 'update_inventry'. Did you mean 'update_inventory'?",
    );
  });

  it('keeps the message bounded when the model sends a huge name', () => {
    const error = errorOf(registry().resolve('a'.repeat(10_000), { tenant: 't1' }));
    expect(error.message.length).toBeLessThan(200);
    expect(error.message).toContain('…');
  });

  it('does not suggest a name whose only versions are deprecated', () => {
    const r = registry();
    r.deprecate('lookup_order', '1.0.0', { reason: 'Gone' });
    expect(errorOf(r.resolve('lookup_ordr', { tenant: 't1' })).message).not.toContain('lookup_order');
  });
});
