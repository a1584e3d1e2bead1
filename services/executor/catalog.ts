import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import type { PolicyEngine } from '../../libs/pipeline/deps.js';
import type { Clock } from '../../libs/ports/clock.js';
import type { BucketLimit } from '../../libs/ports/rate-limiter.js';
import type { ToolRegistry } from '../../libs/registry/tool-registry.js';

/**
 * What an executor runs calls against: the tools (with their implementations), the business rules,
 * and each downstream's outbound rate limit. Built once at start-up by a {@link CatalogFactory}.
 */
export interface Catalog {
  readonly registry: ToolRegistry;
  readonly policy: PolicyEngine;
  /** Outbound budget per downstream (the tools' `downstream` names); unlisted ones are not limited. */
  readonly downstreamLimits: Readonly<Record<string, BucketLimit>>;
  /** Releases what the catalog holds (its own clients, timers); called once on shutdown. */
  close?(): Promise<void>;
}

/** What a catalog factory may use; the executor owns (and ends) both. */
export interface CatalogEnv {
  readonly pool: pg.Pool;
  readonly clock: Clock;
}

/** Builds the catalog; rejects when it cannot (the executor then does not start). */
export type CatalogFactory = (env: CatalogEnv) => Promise<Catalog>;

/** The module main.ts loads its catalog from unless TOOLGATE_CATALOG_MODULE says otherwise. */
export const DEFAULT_CATALOG_MODULE = '../catalog/index.js';

/** The export a catalog module must provide. */
export const CATALOG_EXPORT = 'createStoreCatalog';

/**
 * Loads a catalog factory from a module: `specifier` is a path relative to this directory (the
 * default, services/catalog), an absolute path, a file: URL, or a package name. The module must
 * export `createStoreCatalog: CatalogFactory`. Loading by specifier keeps the executor independent
 * of which catalog a deployment uses (the store-backed one, or a fixed set of tools in a demo or a
 * test). Rejects with a message naming the specifier when the module or its export is missing.
 */
export async function loadCatalogFactory(
  specifier: string,
  base: string | URL = import.meta.url,
): Promise<CatalogFactory> {
  const target = specifier.startsWith('.')
    ? new URL(specifier, base).href
    : isAbsolute(specifier)
      ? pathToFileURL(specifier).href
      : specifier;
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(target)) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`cannot load the catalog module ${JSON.stringify(specifier)}: ${String(err)}`, {
      cause: err,
    });
  }
  const factory = loaded[CATALOG_EXPORT];
  if (typeof factory !== 'function') {
    throw new Error(
      `the catalog module ${JSON.stringify(specifier)} does not export a function ${CATALOG_EXPORT}`,
    );
  }
  return factory as CatalogFactory;
}
