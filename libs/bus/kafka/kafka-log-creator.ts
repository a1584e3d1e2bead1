import { logLevel, type LogEntry, type logCreator } from 'kafkajs';
import type { BusLogger } from '../logger.js';

/** Names of the kafkajs log levels a service can configure. */
export type KafkaLogLevel = 'nothing' | 'error' | 'warn' | 'info' | 'debug';

/** Maps a level name to kafkajs' numeric level. */
export function toKafkaLogLevel(level: KafkaLogLevel): logLevel {
  switch (level) {
    case 'nothing':
      return logLevel.NOTHING;
    case 'error':
      return logLevel.ERROR;
    case 'warn':
      return logLevel.WARN;
    case 'info':
      return logLevel.INFO;
    case 'debug':
      return logLevel.DEBUG;
  }
}

/**
 * Routes kafkajs' own logging into the injected logger (kafkajs otherwise writes JSON to the
 * console). A rejoin after "the group is rebalancing" is routine and handled by the consumer, but
 * kafkajs' connection layer reports it at ERROR; it is downgraded to info so alerts on error logs
 * stay meaningful.
 */
export function kafkaLogCreator(logger: BusLogger): logCreator {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _timestamp, ...extra } = log;
      const fields = { ...extra, kafkajs: namespace };
      const text = String(message);
      switch (level) {
        case logLevel.ERROR:
          if (isRoutineRebalance(extra)) logger.info(fields, text);
          else logger.error(fields, text);
          return;
        case logLevel.WARN:
          logger.warn(fields, text);
          return;
        case logLevel.INFO:
          logger.info(fields, text);
          return;
        default:
          logger.debug(fields, text);
      }
    };
}

function isRoutineRebalance(extra: Record<string, unknown>): boolean {
  const error = typeof extra['error'] === 'string' ? extra['error'] : '';
  return error.includes('rebalancing') || error.includes('not aware of this member');
}
