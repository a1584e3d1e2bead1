import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Catalog, CatalogFactory } from '../catalog/catalog.js';

/** What a catalog module must export, in the words of the error a module without it gets. */
const CONTRACT =
  'export default defineCatalog({ tools }) (a catalog), or a function (env) => catalog that builds one';

/**
 * The store catalog that ships with toolgate, loaded when no catalog module is named. It is named by
 * its place in the package and loaded like any other catalog module, a plugin chosen at run time:
 * the runtime has no code dependency on the demo tools it holds.
 */
const STORE_CATALOG_MODULE = new URL('../../services/catalog/index.js', import.meta.url).href;

/** TypeScript sources are loaded through tsx, registered on first need (no NODE_OPTIONS). */
const TYPESCRIPT = /\.(ts|mts|cts|tsx)$/;

/**
 * Loads the catalog factory a catalog module provides. `specifier` is a path (relative to `cwd`,
 * or absolute), a file: URL or a package name; undefined loads the store catalog that ships with
 * toolgate. The module's default export is either a catalog (`defineCatalog`) or a function
 * `(env) => catalog | Promise<catalog>` for catalogs that need the process's resources (a Postgres
 * pool opened on first use, the clock). `.ts` modules load without any Node flag.
 *
 * Rejects with one line naming the module and what is wrong: it cannot be found or fails to
 * load (the loader's own message follows), or it lacks the default export.
 */
export async function loadCatalogFactory(
  specifier: string | undefined,
  cwd: string = process.cwd(),
): Promise<CatalogFactory> {
  if (specifier === undefined) {
    const store = await importModule(STORE_CATALOG_MODULE);
    return store.createStoreCatalog as CatalogFactory;
  }
  const url = moduleUrl(specifier, cwd);
  let loaded: Record<string, unknown>;
  try {
    loaded = await importModule(url);
  } catch (err) {
    const reason = loadedAsCommonJs(err) ? esModuleHint(specifier) : firstLine(err);
    throw new Error(`catalog module ${specifier}: cannot load it: ${reason}`, { cause: err });
  }
  const exported = loaded.default;
  if (typeof exported === 'function') return exported as CatalogFactory;
  if (isCatalogShape(exported)) return () => exported;
  throw new Error(
    `catalog module ${specifier}: ${exported === undefined ? 'no default export' : 'its default export is not a catalog'}; ${CONTRACT}`,
  );
}

function moduleUrl(specifier: string, cwd: string): string {
  if (specifier.startsWith('file:')) return specifier;
  if (specifier.startsWith('.') || isAbsolute(specifier)) return pathToFileURL(resolve(cwd, specifier)).href;
  return specifier; // a package name
}

let typescriptLoader: Promise<void> | undefined;

async function importModule(url: string): Promise<Record<string, unknown>> {
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !TYPESCRIPT.test(new URL(url).pathname)) throw err;
  }
  // Registered once for the whole process, so the catalog and toolgate share one copy of each module.
  typescriptLoader ??= import('tsx/esm/api').then(({ register }) => {
    register();
  });
  await typescriptLoader;
  // Node remembers the failed import of this URL; a query makes it a new one (nothing ran the first time).
  return (await import(`${url}${url.includes('?') ? '&' : '?'}typescript`)) as Record<string, unknown>;
}

/** A catalog by shape, not by class: the module may see its own copy of toolgate's classes. */
function isCatalogShape(value: unknown): value is Catalog {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as { registry?: { resolve?: unknown }; policy?: { evaluate?: unknown } };
  return typeof c.registry?.resolve === 'function' && typeof c.policy?.evaluate === 'function';
}

/**
 * Node's and tsx's errors when a module of a CommonJS project (package.json without `"type":
 * "module"`, as `npm init -y` writes it) is compiled to CommonJS and requires toolgate, an ES module:
 * Node 20.19+ says "Cannot require() ES Module … This may be caused by a race condition …" (it is not
 * one: it fails every time), older versions ERR_REQUIRE_ESM, and tsx refuses top-level await "with
 * the cjs output format".
 */
const COMMONJS_CODES = new Set(['ERR_REQUIRE_ESM', 'ERR_REQUIRE_ASYNC_MODULE', 'ERR_REQUIRE_CYCLE_MODULE']);
const COMMONJS_MESSAGE = /require\(\) (of )?ES Module|not supported with the "?cjs"? output format/i;

/** Whether a module failed to load because its project is CommonJS (see {@link COMMONJS_CODES}). */
export function loadedAsCommonJs(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return (typeof code === 'string' && COMMONJS_CODES.has(code)) || COMMONJS_MESSAGE.test(message);
}

/** What a user whose catalog module loaded as CommonJS must change, in one line. */
export function esModuleHint(specifier: string): string {
  const esm = /\.[cm]?tsx?$/.test(specifier) ? '.mts' : '.mjs';
  return `your project must be an ES module: add "type": "module" to package.json, or name the file ${esm}`;
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n', 1)[0] ?? text;
}
