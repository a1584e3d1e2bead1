export * from './core/outcome.js';
export * from './core/errors.js';
export type * from './core/types.js';
export type * from './ports/clock.js';
export type * from './ports/idempotency-store.js';
export type * from './ports/rate-limiter.js';
export type * from './registry/tool-definition.js';
