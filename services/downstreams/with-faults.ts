import type { FaultInjector } from './faults.js';

/**
 * Wraps the named async methods of a downstream client so every call goes through `faults`
 * (counted, possibly delayed, failed, hung or answer-lost). The call's AbortSignal is the first
 * argument that is one. Other members are passed through, methods bound to `api` (so classes with
 * private fields keep working). `api` itself is not modified.
 */
export function withFaults<T extends object>(
  api: T,
  faults: FaultInjector,
  methods: readonly (keyof T & string)[],
): T {
  const faulted = new Set<PropertyKey>(methods);
  for (const name of methods) {
    if (typeof api[name] !== 'function') throw new TypeError(`${name} is not a method`);
  }
  return new Proxy(api, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (!faulted.has(prop)) return fn.bind(target);
      return (...args: unknown[]) =>
        faults.around(
          String(prop),
          args.find((a): a is AbortSignal => a instanceof AbortSignal),
          () => Promise.resolve(fn.apply(target, args)),
        );
    },
  });
}
