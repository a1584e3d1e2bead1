/**
 * Freezes `value` and everything reachable from it, in place, and returns it. Stores hand out frozen
 * records so no caller can change what is stored through a reference it was given.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
