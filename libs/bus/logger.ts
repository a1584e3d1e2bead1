/**
 * The logging surface the bus adapters need. pino's `Logger` satisfies it structurally, so a
 * service passes its own (child) logger; nothing in libs/bus logs through a global.
 */
export interface BusLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const ignore = (): void => undefined;

/** Drops everything; the default when no logger is passed. */
export const silentBusLogger: BusLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
