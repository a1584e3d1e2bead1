import { silentLogger, type Logger } from '../../libs/ports/logger.js';

/**
 * The logging surface the reconciler needs: the shared Logger port. Lines carry case ids, call ids,
 * states and codes, never arguments or results.
 */
export type ReconcilerLogger = Logger;

/** Drops everything. */
export const silentReconcilerLogger: ReconcilerLogger = silentLogger;
