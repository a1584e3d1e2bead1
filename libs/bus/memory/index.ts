export * from './memory-event-bus.js';
export type { MemorySubscription } from './memory-member.js';
