import type { PolicyCheck } from './policy-rule.js';

/** What a check found about one value. */
export interface CheckFinding {
  readonly violated: boolean;
  /** The value as `{value}` shows it (the item count for maxItems). */
  readonly shown: unknown;
  /** The limit as `{limit}` shows it. */
  readonly limit: string;
}

/**
 * Applies one check to a present (non-null, defined) value. Fails closed: a value the check cannot
 * compare (a string where `max` expects a number, a non-array for `maxItems`, NaN) is a violation,
 * because a rule that cannot be evaluated must not let the call through.
 */
export function applyCheck(check: PolicyCheck, value: unknown): CheckFinding {
  if ('max' in check) {
    return { violated: !isNumber(value) || value > check.max, shown: value, limit: String(check.max) };
  }
  if ('min' in check) {
    return { violated: !isNumber(value) || value < check.min, shown: value, limit: String(check.min) };
  }
  if ('oneOf' in check) {
    return { violated: !check.oneOf.some((v) => v === value), shown: value, limit: listText(check.oneOf) };
  }
  if ('noneOf' in check) {
    return { violated: check.noneOf.some((v) => v === value), shown: value, limit: listText(check.noneOf) };
  }
  const count = Array.isArray(value) ? value.length : undefined;
  return {
    violated: count === undefined || count > check.maxItems,
    shown: count ?? value,
    limit: String(check.maxItems),
  };
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function listText(values: readonly (string | number | boolean)[]): string {
  return values.map(String).join(', ');
}
