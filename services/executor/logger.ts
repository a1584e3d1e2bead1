/**
 * The logging surface the executor needs. pino's `Logger` satisfies it structurally, so main.ts
 * passes a pino (child) logger and tests pass a recording one; nothing here logs through a global.
 *
 * What is logged is chosen so no secret reaches a log line: never the principal assertion, never
 * the call's arguments or the tool's output — ids, codes, topic coordinates and timings only.
 */
export interface ExecutorLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const ignore = (): void => undefined;

/** Drops everything. */
export const silentLogger: ExecutorLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
