import { describe, expect, it } from 'vitest';
import { compareSemver, isSemver, parseSemver } from '../../../libs/registry/semver.js';

describe('semver', () => {
  it('accepts MAJOR.MINOR.PATCH only', () => {
    expect(parseSemver('10.2.33')).toEqual([10, 2, 33]);
    for (const bad of [
      '1.0',
      '1.0.0.0',
      'v1.0.0',
      '01.0.0',
      '1.0.0-rc.1',
      '1.0.0+b',
      ' 1.0.0',
      '',
      '99999999999999999.0.0',
    ]) {
      expect(isSemver(bad), bad).toBe(false);
    }
    expect(isSemver(1)).toBe(false);
  });

  it('orders numerically, component by component', () => {
    const sorted = ['1.10.0', '1.2.0', '0.9.9', '2.0.0', '1.2.10', '1.2.9'].sort(compareSemver);
    expect(sorted).toEqual(['0.9.9', '1.2.0', '1.2.9', '1.2.10', '1.10.0', '2.0.0']);
    expect(compareSemver('3.1.4', '3.1.4')).toBe(0);
  });

  it('throws on a version it cannot order', () => {
    expect(() => compareSemver('1.0.0', 'latest')).toThrow("Not a MAJOR.MINOR.PATCH version: 'latest'");
  });
});
