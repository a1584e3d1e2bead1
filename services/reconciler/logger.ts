import { silentLogger, type Logger } from '../../libs/ports/logger.js';

/**
 * @deprecated The reconciler logs through the shared port; import `Logger` and `silentLogger` from
 * libs/ports/logger.ts. These aliases stay while the ops CLI still names them.
 */
export type ReconcilerLogger = Logger;

/** @deprecated `silentLogger` from libs/ports/logger.ts. */
export const silentReconcilerLogger: ReconcilerLogger = silentLogger;
