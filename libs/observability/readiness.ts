import type { Readiness } from './health-server.js';

/** One readiness check: true when fine, else false or a short reason. May be async; should be quick. */
export type ReadinessCheck = () => boolean | string | Promise<boolean | string>;

/**
 * The `readiness` function of `startHealthServer` from named checks: all run concurrently on every
 * probe, each bounded by `timeoutMs` (default 1000); one that throws or is slower reports the
 * error's message or "no answer within … ms". Ready iff every check answered true. Never rejects.
 * A service lists what it needs to do its work, e.g. `{ lifecycle, redis }` — not what it merely
 * uses now and then, or a dependency's blip would take every replica out of rotation at once.
 */
export function readinessChecks(
  checks: Readonly<Record<string, ReadinessCheck>>,
  timeoutMs = 1000,
): () => Promise<Readiness> {
  const entries = Object.entries(checks);
  return async () => {
    const verdicts = await Promise.all(entries.map(([, check]) => bounded(check, timeoutMs)));
    const result: Record<string, boolean | string> = {};
    entries.forEach(([name], i) => (result[name] = verdicts[i]!));
    return { ready: verdicts.every((v) => v === true), checks: result };
  };
}

async function bounded(check: ReadinessCheck, timeoutMs: number): Promise<boolean | string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      Promise.resolve().then(check),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
        timer.unref();
      }),
    ]);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    clearTimeout(timer);
  }
}
