import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const dir = new URL('../../../libs/providers/', import.meta.url);

describe('provider SDKs stay development dependencies', () => {
  it('libs/providers imports openai and @anthropic-ai/sdk only with `import type`', () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(0);
    const offending: string[] = [];
    let typeImports = 0;
    for (const file of files) {
      const source = readFileSync(new URL(file, dir), 'utf8');
      // Whole import statements (they may span lines) that name one of the SDK packages.
      for (const match of source.matchAll(/^import\s[\s\S]*?from\s+'([^']+)';/gm)) {
        const pkg = match[1]!;
        if (!pkg.startsWith('openai') && !pkg.startsWith('@anthropic-ai/sdk')) continue;
        // `import { type X }` still loads the module under verbatimModuleSyntax; only `import type` is erased.
        if (match[0].startsWith('import type ')) typeImports++;
        else offending.push(`${file}: ${match[0]}`);
      }
    }
    expect(offending).toEqual([]);
    expect(typeImports).toBeGreaterThanOrEqual(4);
  });
});
