/**
 * The logging surface the audit sink needs; pino's `Logger` satisfies it structurally. Lines carry
 * ids, counts and topic coordinates only, never record contents.
 */
export interface SinkLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const ignore = (): void => undefined;

/** Drops everything. */
export const silentSinkLogger: SinkLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
