import { describe, expect, it } from 'vitest';
import { displaySafe, hasHiddenCharacters } from '../../../libs/core/display-text.js';
import { inTenantScope, tenantClaimOf, tenantScopeOf } from '../../../libs/core/tenant-scope.js';

describe('displaySafe', () => {
  it('shows a right-to-left override as an escape, so an amount reads in stored order', () => {
    expect(displaySafe('refund \u202E$ 00.1\u202C')).toBe('refund \\u{202E}$ 00.1\\u{202C}');
  });

  it('escapes controls, isolates, zero-width characters, separators and lone surrogates', () => {
    const hidden = [
      '\u0000',
      '\n',
      '\t',
      '\u007f',
      '\u0085',
      '\u061c',
      '\u200b',
      '\u200f',
      '\u2028',
      '\u2066',
      '\u2069',
      '\ufeff',
      '\ud800',
      '\udc00',
    ];
    for (const c of hidden) {
      const shown = displaySafe(`a${c}b`);
      expect(shown).toMatch(/^a\\u\{[0-9A-F]{4}\}b$/);
      expect(hasHiddenCharacters(`a${c}b`)).toBe(true);
    }
  });

  it('keeps ordinary text, accents, emoji and right-to-left letters as they are', () => {
    const plain = 'Café 5 × €3 — 👍 שלום مرحبا';
    expect(displaySafe(plain)).toBe(plain);
    expect(hasHiddenCharacters(plain)).toBe(false);
  });
});

describe('tenant scope', () => {
  it('grants every tenant only for the * claim', () => {
    expect(tenantScopeOf(['*'])).toEqual({ all: true });
    expect(inTenantScope(tenantScopeOf(['t1', '*']), 'any')).toBe(true);
    const some = tenantScopeOf(['t2', 't1', 't2', '']);
    expect(some).toEqual({ all: false, tenants: ['t1', 't2'] });
    expect(inTenantScope(some, 't1')).toBe(true);
    expect(inTenantScope(some, 't3')).toBe(false);
    expect(inTenantScope(tenantScopeOf([]), 't1')).toBe(false);
    expect(tenantClaimOf(some)).toEqual(['t1', 't2']);
    expect(tenantClaimOf({ all: true })).toEqual(['*']);
  });
});
