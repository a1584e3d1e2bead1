import { fileURLToPath, pathToFileURL } from 'node:url';
import { cruise, type IConfiguration, type ICruiseResult } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

/**
 * The layering rules of `npm run lint` (.dependency-cruiser.js), run on a small tree made to break
 * each rule once (test/fixtures/dependency-rules) beside imports the rules allow: every violation
 * is reported, and nothing else. So a rule that stopped matching (a path pattern that drifted, a
 * folder-scoped rule that no longer sees nested folders) fails here, not silently in the lint.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../../fixtures/dependency-rules/', import.meta.url));

async function violationsInFixture(): Promise<string[]> {
  const { default: config } = (await import(pathToFileURL(`${ROOT}.dependency-cruiser.js`).href)) as {
    default: IConfiguration;
  };
  // The fixture is plain JavaScript: no tsconfig to resolve through, and no cache to keep.
  const { tsConfig: _tsConfig, cache: _cache, ...options } = config.options ?? {};
  const result = await cruise(['libs', 'services'], {
    ...options,
    baseDir: FIXTURE,
    validate: true,
    ruleSet: { forbidden: config.forbidden ?? [] },
  });
  const output = result.output as ICruiseResult;
  return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}

describe('the dependency rules', () => {
  it('report each forbidden import of the fixture and none of the allowed ones', async () => {
    expect(await violationsInFixture()).toEqual([
      'core-imports-only-core: libs/core/time.js → libs/ports/clock.js',
      'demo-world-stays-in-the-demo-world: services/catalog/t.js → services/executor/e.js',
      'libs-never-import-services: libs/testing/kit.js → services/ops/run.js',
      // A cycle is reported from each folder on it; the second pair is between nested folders
      // (libs/adapters/memory, libs/patterns/jobs) whose parents hold no module of their own.
      'no-cycles-between-libs-folders: libs/adapters/memory → libs/patterns/jobs',
      'no-cycles-between-libs-folders: libs/core → libs/ports',
      'no-cycles-between-libs-folders: libs/patterns/jobs → libs/adapters/memory',
      'no-cycles-between-libs-folders: libs/ports → libs/core',
      'ports-import-only-core: libs/ports/store.js → libs/pipeline/record.js',
      'services-import-libs-not-services: services/ops/run.js → services/reconciler/resolve.js',
    ]);
  }, 60_000);
});
