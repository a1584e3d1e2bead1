import { afterEach } from 'vitest';
import {
  createEmbeddedStore,
  type EmbeddedStore,
  type EmbeddedStoreOptions,
} from '../../../services/demo/embedded-store.js';

/**
 * Registers an `afterEach` that stops the embedded store the test started, if any, and returns
 * `start(options)`: creates a store with `options`, starts it and returns it. One store per test.
 */
export function embeddedStores(): (options?: EmbeddedStoreOptions) => Promise<EmbeddedStore> {
  let store: EmbeddedStore | undefined;
  afterEach(async () => {
    await store?.stop();
    store = undefined;
  });
  return async (options) => {
    store = createEmbeddedStore(options);
    await store.start();
    return store;
  };
}
