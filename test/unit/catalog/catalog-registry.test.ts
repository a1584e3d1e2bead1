import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import { ConfinedFs } from '../../../libs/integrations/confined-fs.js';
import {
  buildStoreCatalog,
  memoryPatternBackends,
  type StoreCatalog,
} from '../../../services/catalog/index.js';
import { createMemoryDownstreams } from '../../../services/downstreams/memory-downstreams.js';
import { createEmbeddedStore } from '../../../services/demo/embedded-store.js';
import {
  CONFIGURED_TOOLS,
  CORE_TOOLS,
  PURCHASE_ORDER_TOOLS,
  REPORT_JOB_TOOLS,
  expectProviderExportsValid,
} from './registered-tools.js';

const T0 = Date.parse('2026-11-30T09:00:00.000Z');
let dir: string;
let documents: ConfinedFs;
// Never connected: pg pools open connections on first query, and these tests only export schemas.
const reportsPool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', max: 1 });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'catalog-docs-'));
  await writeFile(join(dir, 'returns.md'), '# Returns\nWithin 30 days.\n');
  documents = await ConfinedFs.create(dir, { maxBytes: 4_096, extensions: ['.md'] });
});

afterAll(async () => {
  await reportsPool.end();
  await rm(dir, { recursive: true, force: true });
});

function memoryCatalog(configured: boolean): StoreCatalog {
  const clock = new ManualClock(T0);
  const patterns = configured
    ? memoryPatternBackends(clock, {
        legacyFilingUrl: 'http://127.0.0.1:7410',
        documents,
        reportsPool,
      })
    : undefined;
  return buildStoreCatalog(createMemoryDownstreams({ clock }), clock, patterns);
}

describe('store catalog registry: embedded (memory) mode', () => {
  it('by default: the core tools, the report-job trio and the purchase-order pair, nothing unconfigured', async () => {
    const catalog = memoryCatalog(false);
    expect(expectProviderExportsValid(catalog.registry)).toEqual(
      [...CORE_TOOLS, ...REPORT_JOB_TOOLS, ...PURCHASE_ORDER_TOOLS].sort(),
    );
    await catalog.close();
  });

  it('with a filing service, a documents folder and a reports pool: every tool, each exportable', async () => {
    const catalog = memoryCatalog(true);
    expect(expectProviderExportsValid(catalog.registry)).toEqual(
      [...CORE_TOOLS, ...REPORT_JOB_TOOLS, ...PURCHASE_ORDER_TOOLS, ...CONFIGURED_TOOLS].sort(),
    );
    await catalog.close();
  });

  it('the embedded toolgate runs the same catalog, with its pattern backends exposed', async () => {
    const tg = createEmbeddedStore({ clock: new ManualClock(T0) });
    const names = tg.catalog.registry.list().map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining([...REPORT_JOB_TOOLS, ...PURCHASE_ORDER_TOOLS]));
    expect(names).not.toContain('submit_filing');
    expect(tg.catalog.patterns.purchasing).toBeDefined();
    await tg.stop();
  });
});
