/** Running the calls of one model turn: per-resource order, bounded concurrency, one deadline. */
export { runBatch, type BatchCall, type BatchItem, type RunBatchOptions, type RunCall } from './run-batch.js';
