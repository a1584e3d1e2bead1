/**
 * The logging surface the reconciler needs; pino's `Logger` satisfies it structurally. Lines carry
 * case ids, call ids, states and codes, never arguments or results.
 */
export interface ReconcilerLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const ignore = (): void => undefined;

/** Drops everything. */
export const silentReconcilerLogger: ReconcilerLogger = {
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
};
