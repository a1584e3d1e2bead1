import type { Logger } from 'pino';
import type { BusLogger } from '../bus/logger.js';

/**
 * The libs/bus logging surface over a pino logger: a child with `component: "bus"` (kafkajs lines
 * also carry their `kafkajs` namespace). Use a logger from `createLogger`, so whatever kafkajs puts
 * in a log entry (broker errors, SASL failures) goes through the same secret scrubbing. A logger
 * that throws never breaks the bus: the line is dropped.
 */
export function busLogger(logger: Logger): BusLogger {
  const child = logger.child({ component: 'bus' });
  const guard =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (obj: object, msg?: string): void => {
      try {
        child[level](obj, msg);
      } catch {
        // Logging must not change what the bus does.
      }
    };
  return { debug: guard('debug'), info: guard('info'), warn: guard('warn'), error: guard('error') };
}
