export * from './batch-control.js';
export * from './batch-progress.js';
export * from './keyed-processor.js';
export * from './logger.js';
export * from './offset-tracker.js';
export * from './partitioner.js';
export * from './memory/index.js';
export * from './kafka/index.js';
