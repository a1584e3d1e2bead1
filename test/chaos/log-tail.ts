import type { Logger } from '../../libs/ports/logger.js';

/**
 * A logger for scenarios that keeps quiet but remembers: warnings and errors are counted by
 * message, with the last fields seen for each, so a scenario that times out can say what its
 * components were complaining about.
 */
export interface LogTail extends Logger {
  /** One line per distinct warning / error message: count, message and a short form of its fields. */
  summary(maxMessages?: number): string;
}

export function logTail(component: string): LogTail {
  const seen = new Map<string, { count: number; fields: string }>();
  const keep =
    (level: 'warn' | 'error') =>
    (obj: object, msg?: string): void => {
      const key = `${level} ${msg ?? ''}`;
      const entry = seen.get(key) ?? { count: 0, fields: '' };
      entry.count += 1;
      entry.fields = short(obj);
      seen.set(key, entry);
    };
  const ignore = (): void => undefined;
  return {
    debug: ignore,
    info: ignore,
    warn: keep('warn'),
    error: keep('error'),
    summary(maxMessages = 8) {
      if (seen.size === 0) return `${component}: no warnings or errors`;
      const lines = [...seen.entries()]
        .slice(-maxMessages)
        .map(([key, { count, fields }]) => `  ${count}× ${key} ${fields}`);
      return `${component}:\n${lines.join('\n')}`;
    },
  };
}

function short(obj: object): string {
  try {
    const text = JSON.stringify(obj, (_k, v: unknown) =>
      v instanceof Error ? { name: v.name, message: v.message } : v,
    );
    return text.length > 300 ? `${text.slice(0, 300)}…` : text;
  } catch {
    return '';
  }
}

/**
 * The same summary for a child process's pino output: its warn and error lines counted by message.
 */
export function complaints(component: string, lines: readonly string[], maxMessages = 8): string {
  const tail = logTail(component);
  for (const line of lines) {
    let entry: { level?: number; msg?: string };
    try {
      entry = JSON.parse(line) as { level?: number; msg?: string };
    } catch {
      continue;
    }
    // pino levels: 40 warn, 50 error, 60 fatal.
    if ((entry.level ?? 0) >= 50) tail.error(entry, entry.msg);
    else if (entry.level === 40) tail.warn(entry, entry.msg);
  }
  return tail.summary(maxMessages);
}
