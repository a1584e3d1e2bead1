import { silentLogger, type Logger } from '../ports/logger.js';

/**
 * The logging surface the bus adapters need: the shared logging port (libs/ports/logger.ts). A
 * service passes its own (child) logger; nothing in libs/bus logs through a global.
 */
export type BusLogger = Logger;

/** Drops everything; the default when no logger is passed. */
export const silentBusLogger: BusLogger = silentLogger;
