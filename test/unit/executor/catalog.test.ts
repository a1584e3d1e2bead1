import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../libs/core/system-clock.js';
import { createStoreCatalog } from '../../../services/catalog/index.js';
import type { CatalogEnv } from '../../../libs/catalog/catalog.js';
import { esModuleHint, loadCatalogFactory, loadedAsCommonJs } from '../../../libs/runtime/catalog-module.js';

const here = fileURLToPath(new URL('./', import.meta.url));

/** A catalog env whose Postgres is never wanted: calling it fails the test. */
const noDatabase: CatalogEnv = {
  clock: systemClock,
  postgres: () => Promise.reject(new Error('this catalog must not open Postgres')),
};

describe('loadCatalogFactory', () => {
  it('loads the default export from a relative (to the working directory), absolute or file: URL specifier', async () => {
    for (const specifier of [
      './fixtures/fixed-catalog.ts',
      `${here}fixtures/fixed-catalog.ts`,
      pathToFileURL(`${here}fixtures/fixed-catalog.ts`).href,
    ]) {
      const factory = await loadCatalogFactory(specifier, here);
      const catalog = await factory(noDatabase);
      expect(catalog.downstreamLimits).toEqual({ crm: { capacity: 5, refillPerSecond: 1 } });
      expect(catalog.registry.list()).toEqual([]);
    }
  });

  it('takes a catalog made with defineCatalog as the default export', async () => {
    const factory = await loadCatalogFactory('./fixtures/defined-catalog.ts', here);
    const catalog = await factory(noDatabase);
    expect(catalog.registry.list().map((entry) => entry.name)).toEqual(['echo_text']);
  });

  it('names the module and what is missing, in one line', async () => {
    const absent = loadCatalogFactory('./fixtures/absent.ts', here);
    await expect(absent).rejects.toThrow(/^catalog module \.\/fixtures\/absent\.ts: cannot load it: /);
    await expect(loadCatalogFactory('./fixtures/no-factory.ts', here)).rejects.toThrow(
      'catalog module ./fixtures/no-factory.ts: no default export; export default defineCatalog({ tools })',
    );
    await expect(loadCatalogFactory('./fixtures/not-a-catalog.ts', here)).rejects.toThrow(
      'catalog module ./fixtures/not-a-catalog.ts: its default export is not a catalog;',
    );
    for (const bad of ['./fixtures/absent.ts', './fixtures/no-factory.ts', './fixtures/not-a-catalog.ts']) {
      const message = await loadCatalogFactory(bad, here).then(
        () => '',
        (err: Error) => err.message,
      );
      expect(message).not.toContain('\n');
    }
  });

  it('tells a CommonJS project, in one line, that it must be an ES module', async () => {
    const message = await loadCatalogFactory('./fixtures/commonjs-project/catalog.cjs', here).then(
      () => '',
      (err: Error) => err.message,
    );
    expect(message).toBe(
      'catalog module ./fixtures/commonjs-project/catalog.cjs: cannot load it: your project must be an ES ' +
        'module: add "type": "module" to package.json, or name the file .mjs',
    );
    expect(esModuleHint('./my-tools.ts')).toBe(
      'your project must be an ES module: add "type": "module" to package.json, or name the file .mts',
    );
    // Any other failure keeps the loader's own first line.
    expect(loadedAsCommonJs(new Error('Cannot find module ./x'))).toBe(false);
  });

  it('loads the store catalog when no module is named', async () => {
    const factory = await loadCatalogFactory(undefined, here);
    expect(factory).toBe(createStoreCatalog);
  });
});
