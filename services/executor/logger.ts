import type { Logger } from '../../libs/ports/logger.js';

/**
 * @deprecated The executor logs through the shared port; import `Logger` and `silentLogger` from
 * libs/ports/logger.ts. This alias stays while code outside the executor still names it.
 */
export type ExecutorLogger = Logger;
export { silentLogger } from '../../libs/ports/logger.js';
