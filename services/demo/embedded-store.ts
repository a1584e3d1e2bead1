import type { PatternBackends } from '../catalog/pattern-backends.js';
import { buildStoreCatalog, type StoreCatalog } from '../catalog/store-catalog.js';
import { createMemoryDownstreams } from '../downstreams/memory-downstreams.js';
import type { StoreDownstreams } from '../downstreams/store-downstreams.js';
import { systemClock } from '../../libs/core/system-clock.js';
import {
  createEmbeddedToolgate,
  type EmbeddedRunOptions,
  type EmbeddedToolgate,
} from '../embedded/create-embedded-toolgate.js';

/** The store demo's extras on top of how any embedded toolgate runs. */
export interface EmbeddedStoreOptions extends EmbeddedRunOptions {
  /** The store's services; default fresh in-memory ones seeded with the story's data. */
  readonly downstreams?: StoreDownstreams;
  /**
   * The pattern tools' backends; default in-memory ones (`memoryPatternBackends`: report jobs and
   * the purchase-order pair with a random preview key). Pass `memoryPatternBackends(clock, {...})`
   * with a legacy filing URL, a documents folder or a reports pool to register those tools too.
   * Closed by `stop`.
   */
  readonly patterns?: PatternBackends;
}

/** The embedded toolgate running the store catalog, and the fake store behind it. */
export interface EmbeddedStore extends EmbeddedToolgate<StoreCatalog> {
  /** The store's services: the payment ledger, fault switches. */
  readonly downstreams: StoreDownstreams;
}

/**
 * The refund story's toolgate in one process: the store catalog over in-memory fake services and
 * pattern backends, run by `createEmbeddedToolgate`. For the demo and the store's own tests.
 */
export function createEmbeddedStore(options: EmbeddedStoreOptions = {}): EmbeddedStore {
  const { downstreams: given, patterns, ...run } = options;
  const downstreams = given ?? createMemoryDownstreams({ clock: options.clock ?? systemClock });
  const catalog = buildStoreCatalog(downstreams, options.clock ?? systemClock, patterns);
  return { ...createEmbeddedToolgate({ ...run, catalog }), downstreams };
}
