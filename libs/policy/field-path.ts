/**
 * Reads a dot path (`a.b.0.c`) from a value, following own properties only, so a path can never
 * reach `constructor`, `__proto__` or anything else inherited. Returns undefined when any step is
 * missing or not an object.
 */
export function readPath(value: unknown, path: string): unknown {
  let current: unknown = value;
  for (const segment of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}
