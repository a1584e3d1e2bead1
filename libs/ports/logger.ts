/**
 * The logging port every service and adapter takes. pino's `Logger` satisfies it structurally, so
 * a process passes its own (child) logger and tests pass a recording one; nothing logs through a
 * global.
 *
 * Callers log ids, codes, downstream names, statuses, topic coordinates and timings — never a
 * principal assertion, a credential or token, a call's arguments, a tool's output, record contents,
 * or a downstream request's body or query string. A logger must not throw into its caller's logic;
 * wrap one that might (see libs/observability `busLogger`).
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const ignore = (): void => undefined;

/** Drops everything; the default where a logger is optional. */
export const silentLogger: Logger = Object.freeze({
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
});
