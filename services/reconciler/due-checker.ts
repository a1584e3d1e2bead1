import type { ReconciliationCase } from '../../libs/ports/case-store.js';
import type { CheckStep } from './case-moves.js';
import { checkCase, type CheckerDeps } from './check-case.js';
import { backoffCapMs } from '../../libs/core/backoff.js';

export interface DueCheckerOptions {
  /** How often the loop looks for due cases when the last look found fewer than a page. Default 500 ms. */
  readonly pollIntervalMs?: number;
  /** Due cases taken per look (soonest due first). Default 100. */
  readonly pageSize?: number;
  /** Cases checked at once. Default 8. */
  readonly concurrency?: number;
}

/** The loop that visits open cases whose next status check is due. */
export interface DueChecker {
  /**
   * Visits every case due now (one page), `concurrency` at a time, and resolves with what each visit
   * did. Rejects only when the case store cannot be read. The loop calls it; tests call it directly.
   */
  checkDue(signal?: AbortSignal): Promise<CheckStep[]>;
  /** Starts the loop. */
  start(): void;
  /**
   * Ends the loop: no new visit starts; visits in progress finish their check (bounded by its
   * timeout), and their deliveries keep retrying until `kill` aborts. Resolves when the loop is done.
   */
  stop(kill: AbortSignal): Promise<void>;
}

/**
 * Creates the due-check loop. A visit that fails (the store went away mid-visit) is logged and the
 * case stays due, so the next look retries it; a store that cannot be listed backs the loop off.
 * Several reconcilers may run the loop at once: visits move cases only from the version they read,
 * so each check is recorded and each resolution delivered once.
 */
export function createDueChecker(deps: CheckerDeps, options: DueCheckerOptions = {}): DueChecker {
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const pageSize = options.pageSize ?? 100;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const stopping = new AbortController();
  const killed = new AbortController();
  let loop: Promise<void> | undefined;

  const visit = async (c: ReconciliationCase, signal: AbortSignal): Promise<CheckStep> => {
    try {
      const step = await checkCase(c, deps, signal);
      deps.logger.debug({ caseId: c.caseId, callId: c.callId, step: step.kind }, 'case visited');
      if (step.kind === 'resolved' && step.delivery?.complete === false) {
        deps.logger.error(
          { caseId: c.caseId, callId: c.callId, ...step.delivery },
          'resolved, but stopped before its outputs were all delivered; the requester keeps its UNRESOLVED answer',
        );
      }
      return step;
    } catch (err) {
      deps.logger.error({ caseId: c.caseId, callId: c.callId, err }, 'case visit failed; it stays due');
      return { kind: 'skipped' };
    }
  };

  const checkDue = async (signal: AbortSignal = killed.signal): Promise<CheckStep[]> => {
    const due = await deps.cases.list({ state: 'open', dueBeforeMs: deps.clock.now(), limit: pageSize });
    const steps: CheckStep[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < due.length && !stopping.signal.aborted) {
        steps.push(await visit(due[next++]!, signal));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, due.length) }, worker));
    return steps;
  };

  const run = async (): Promise<void> => {
    let failures = 0;
    while (!stopping.signal.aborted) {
      let waitMs = pollIntervalMs;
      try {
        const steps = await checkDue();
        failures = 0;
        if (steps.length >= pageSize) waitMs = 0;
      } catch (err) {
        failures += 1;
        waitMs = Math.max(pollIntervalMs, backoffCapMs(deps.backoff, failures));
        deps.logger.warn({ err, failures, waitMs }, 'cannot list due cases; backing off');
      }
      try {
        await deps.clock.sleep(waitMs, stopping.signal);
      } catch {
        return;
      }
    }
  };

  return {
    checkDue,
    start() {
      loop ??= run();
    },
    async stop(kill) {
      kill.addEventListener('abort', () => killed.abort(kill.reason), { once: true });
      if (kill.aborted) killed.abort(kill.reason);
      stopping.abort(new Error('the reconciler is stopping'));
      await loop;
    },
  };
}
