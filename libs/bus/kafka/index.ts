export * from './kafka-event-bus.js';
export type { KafkaLogLevel } from './kafka-log-creator.js';
