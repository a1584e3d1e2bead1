import type { Clock } from '../../libs/ports/clock.js';
import { backoffDelay, type BackoffPolicy } from '../../libs/core/backoff.js';
import type { Logger } from '../../libs/ports/logger.js';

/** 6 attempts, 250 ms doubling: about 8 s before a start-up step is declared failed. */
export const STARTUP_RETRY: BackoffPolicy & { readonly attempts: number } = {
  attempts: 6,
  firstDelayMs: 250,
  maxDelayMs: 4_000,
};

/**
 * Runs an idempotent start-up step (creating topics, registering schemas), retrying a few times
 * when it fails. Servers that were just started — or topics just created — answer transiently
 * wrong for a moment (kafkajs' createTopics can report "This server does not host this
 * topic-partition" while new metadata propagates; a registry may refuse connections while it
 * boots). Rejects with the last error once the attempts are used up, so a real misconfiguration
 * still stops the process (exit 1) quickly.
 */
export async function retryStartupStep<T>(
  what: string,
  step: () => Promise<T>,
  deps: { readonly clock: Clock; readonly logger: Logger },
  policy: BackoffPolicy & { readonly attempts: number } = STARTUP_RETRY,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (attempt >= policy.attempts) throw err;
      const delayMs = backoffDelay(policy, attempt);
      deps.logger.warn({ err, step: what, attempt, delayMs }, 'start-up step failed; retrying');
      await deps.clock.sleep(delayMs);
    }
  }
}
