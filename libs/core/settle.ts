/**
 * Runs a synchronous body and turns its return or throw into a settled promise, so callers only
 * ever handle rejection (a throw becomes a rejected promise, never a synchronous throw; a non-Error
 * throw is wrapped in an Error). The memory adapters use it so each method is one synchronous
 * critical section (no await inside) behind an async port; `syncStage` so a stage that needs no
 * awaiting still has the stage signature.
 */
export function settle<T>(body: () => T): Promise<T> {
  try {
    return Promise.resolve(body());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}
