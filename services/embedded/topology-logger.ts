/**
 * The one logging surface every part of the topology accepts (executor, audit sink, bus, SDK all
 * declare this shape; pino's Logger satisfies it). Lines carry ids and codes, never payloads.
 */
export interface TopologyLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const ignore = (): void => undefined;

/** Drops everything: the embedded default, so a demo's output is the story, not the plumbing. */
export const quietLogger: TopologyLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };

/** Passes warnings and errors to `write` as one line each; drops the rest. */
export function warningsTo(write: (line: string) => void): TopologyLogger {
  const line =
    (level: string) =>
    (obj: object, msg?: string): void =>
      write(`[${level}] ${msg ?? ''} ${safeJson(obj)}`);
  return { debug: ignore, info: ignore, warn: line('warn'), error: line('error') };
}

function safeJson(obj: object): string {
  try {
    return JSON.stringify(obj, (_, v: unknown) => (v instanceof Error ? `${v.name}: ${v.message}` : v));
  } catch {
    return '{}';
  }
}
