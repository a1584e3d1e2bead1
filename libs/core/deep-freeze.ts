/**
 * Freezes `value` and every object reachable from it, in place, and returns it, so a value handed
 * to many callers (a stored record, a cached schema, a parsed policy) cannot be changed through any
 * reference to it. An object that is already frozen is taken as frozen all the way down and not
 * entered: this is what makes a cyclic value terminate, and it means a frozen object holding an
 * unfrozen one stays as it is. Primitives are returned unchanged.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
