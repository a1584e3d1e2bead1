/**
 * The logging surface the integrations use. pino's `Logger` satisfies it structurally. Integrations
 * log ids, downstream names, statuses and timings only — never a credential, a token, a request body
 * or a query string.
 */
export interface IntegrationLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const ignore = (): void => undefined;

/** Drops everything. */
export const silentIntegrationLogger: IntegrationLogger = {
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
};
