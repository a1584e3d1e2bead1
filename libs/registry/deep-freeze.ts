/**
 * Freezes a plain-data tree in place and returns it. Used for cached schemas handed to many
 * callers: one caller editing its copy must not change what the next request sends to a model.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
