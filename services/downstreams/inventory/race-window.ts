import type { AdjustRequest } from './inventory-api.js';

/**
 * What an inventory implementation awaits between reading a level and writing it back: the gap in
 * which a concurrent adjustment of the same SKU reads the same, soon stale, value. Tests pass a
 * barrier here to make a race happen on purpose.
 */
export type BetweenReadAndWrite = (request: AdjustRequest) => Promise<void>;

/** The default gap: one turn of the event loop, as a round trip to a service would take. */
export const nextTurn: BetweenReadAndWrite = () => new Promise<void>((resolve) => setImmediate(resolve));
