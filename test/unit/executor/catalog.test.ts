import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../libs/core/system-clock.js';
import { DEFAULT_CATALOG_MODULE, loadCatalogFactory } from '../../../services/executor/catalog.js';

const here = new URL('./', import.meta.url);

describe('loadCatalogFactory', () => {
  it('loads createStoreCatalog from a relative, an absolute or a file: URL specifier', async () => {
    const pool = new pg.Pool();
    for (const specifier of [
      './fixtures/fixed-catalog.js',
      fileURLToPath(new URL('./fixtures/fixed-catalog.ts', here)),
      new URL('./fixtures/fixed-catalog.ts', here).href,
    ]) {
      const factory = await loadCatalogFactory(specifier, here);
      const catalog = await factory({ pool, clock: systemClock });
      expect(catalog.downstreamLimits).toEqual({ crm: { capacity: 5, refillPerSecond: 1 } });
      expect(catalog.registry.list()).toEqual([]);
    }
    await pool.end();
  });

  it('names the module when it is missing or exports no factory', async () => {
    await expect(loadCatalogFactory('./fixtures/absent.js', here)).rejects.toThrow(
      /cannot load the catalog module "\.\/fixtures\/absent\.js"/,
    );
    await expect(loadCatalogFactory('./fixtures/no-factory.js', here)).rejects.toThrow(
      /does not export a function createStoreCatalog/,
    );
  });

  it('defaults to the catalog service beside the executor', () => {
    expect(
      new URL(DEFAULT_CATALOG_MODULE, new URL('../../../services/executor/catalog.ts', import.meta.url))
        .pathname,
    ).toMatch(/services\/catalog\/index\.js$/);
  });
});
