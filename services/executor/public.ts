/**
 * `toolgate/executor`: what a deployment needs to run its own tools behind toolgate. Filled in as
 * the public executor API lands.
 */
export type { Catalog, CatalogEnv, CatalogFactory } from './catalog.js';
