import { silentLogger, type Logger } from '../../libs/ports/logger.js';

/**
 * The logging surface the audit sink needs: the shared Logger port. Lines carry ids, counts and
 * topic coordinates only, never record contents.
 */
export type SinkLogger = Logger;

/** Drops everything. */
export const silentSinkLogger: SinkLogger = silentLogger;
