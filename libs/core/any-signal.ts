/** A signal that aborts when any of its sources does, and a way to let go of the sources. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Removes the listeners from the sources; the signal no longer follows them. Idempotent. */
  dispose(): void;
}

/**
 * Like `AbortSignal.any(sources)`, with the reason of the first source to abort, but releasable.
 * On Node 20 every `AbortSignal.any` result stays registered with its sources for as long as they
 * live (measured: about 55 bytes per call, never returned, with a source that outlives the call);
 * composing with an executor-lifetime signal per call therefore grows the heap with every call.
 * Here the caller disposes the link when its wait is over, and nothing is left behind.
 */
export function anySignal(sources: readonly AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const already = sources.find((s) => s.aborted);
  if (already !== undefined) {
    controller.abort(already.reason);
    return { signal: controller.signal, dispose: () => undefined };
  }
  const listeners = sources.map((source) => {
    const onAbort = (): void => {
      dispose();
      controller.abort(source.reason);
    };
    source.addEventListener('abort', onAbort, { once: true });
    return { source, onAbort };
  });
  const dispose = (): void => {
    for (const { source, onAbort } of listeners) source.removeEventListener('abort', onAbort);
    listeners.length = 0;
  };
  return { signal: controller.signal, dispose };
}
