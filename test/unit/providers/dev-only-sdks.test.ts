import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The one place allowed to load the provider SDKs: the eval is a development tool and imports them
 * at run time, on demand.
 */
const SDK_USERS = ['services/eval/'];

/**
 * Any reference to the `openai` or `@anthropic-ai/sdk` package or one of their subpaths: static
 * imports and re-exports (`import type` too: it ends up in the declaration files), dynamic imports,
 * `import('…')` type queries, `require` and triple-slash type references.
 */
const SDK_REFERENCE =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*|<reference\s+types\s*=\s*)['"](?:openai|@anthropic-ai\/sdk)(?:\/[^'"]*)?['"]/g;

/** Source files under `dir` (relative to the repository root), as root-relative paths with `/`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.[cm]?[jt]s$/.test(file))
    .map((file) => `${dir}${file.split('\\').join('/')}`);
}

/** `file: matched text` for every SDK reference in the files. */
function sdkReferences(files: readonly string[]): string[] {
  return files.flatMap((file) =>
    [...readFileSync(join(root, file), 'utf8').matchAll(SDK_REFERENCE)].map((m) => `${file}: ${m[0]}`),
  );
}

describe('provider SDKs stay development dependencies', () => {
  it('no file under libs/ or services/ (outside the eval) refers to openai or @anthropic-ai/sdk', () => {
    const files = [...sourceFiles('libs/'), ...sourceFiles('services/')].filter(
      (file) => !SDK_USERS.some((dir) => file.startsWith(dir)),
    );
    expect(files.length).toBeGreaterThan(100);
    expect(files).toContain('libs/providers/provider-shapes.ts');
    expect(sdkReferences(files)).toEqual([]);
  });

  it('the scan finds references where they are (the eval loads both SDKs)', () => {
    const found = sdkReferences(sourceFiles('services/eval/'));
    expect(found).toEqual(
      expect.arrayContaining([
        "services/eval/live-model.ts: import('openai'",
        "services/eval/live-model.ts: import('@anthropic-ai/sdk'",
      ]),
    );
  });

  it('the pattern covers every way a module can be referred to', () => {
    const samples = [
      "import type { Message } from '@anthropic-ai/sdk/resources/messages';",
      'import OpenAI from "openai";',
      "export type { ChatCompletion } from 'openai/resources/chat/completions';",
      "import 'openai/shims/node';",
      "type M = import('@anthropic-ai/sdk').Message;",
      "const sdk = require('openai');",
      '/// <reference types="openai" />',
    ];
    expect(samples.map((s) => s.match(SDK_REFERENCE)?.length ?? 0)).toEqual(samples.map(() => 1));
    const lookalikes = ["import { x } from './openai-normalize.js';", "import x from 'openai-edge';"];
    expect(lookalikes.map((s) => s.match(SDK_REFERENCE))).toEqual([null, null]);
  });
});
