/**
 * Runs a synchronous body and turns its return or throw into a settled promise. The memory adapters
 * use it so each method is one synchronous critical section (no await inside) behind an async port.
 */
export function settle<T>(body: () => T): Promise<T> {
  try {
    return Promise.resolve(body());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}
