import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ToolCallResult } from '../../../libs/core/types.js';

/**
 * Runs the programs of README.md's "Writing a tool" section as written. Each ```ts block is
 * written to test/.generated/readme/ and imported, so vitest resolves `toolgate` and
 * `toolgate/embedded` to the sources exactly as a user's import resolves the package. The
 * convention the examples follow: each checks what its agent received with `assert` (an import
 * that rejects fails here), and exports the `results` it checked, which this test compares with
 * its own expectation — so an example that lost its asserts, or stopped before its end, still
 * fails. The same files are type-checked as the package's user would compile them.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const OUT = join(ROOT, 'test/.generated/readme');
const SECTION = '## Writing a tool';
const NEXT_SECTION = '## Tools: the store-support catalog';

/** The package names the examples import, as the package's `exports` would map them. */
const PACKAGE_PATHS: Record<string, string[]> = {
  toolgate: ['libs/index.ts'],
  'toolgate/embedded': ['services/embedded/index.ts'],
  'toolgate/sdk': ['services/sdk/index.ts'],
  'toolgate/testing': ['services/embedded/testing.ts'],
};

/** What each example's `results` must come to: tool, outcome, error code, tool invocations. */
const EXPECTED: ReadonlyArray<ReadonlyArray<[string, string, string | undefined, number]>> = [
  [
    ['lookup_ticket', 'SUCCESS', undefined, 1],
    ['lookup_ticket', 'EXECUTION_ERROR', 'CALLER_ERROR', 1],
  ],
  [
    ['close_ticket', 'SUCCESS', undefined, 2],
    ['close_ticket', 'EXECUTION_ERROR', 'CALLER_ERROR', 1],
    ['close_ticket', 'DUPLICATE', undefined, 0],
    ['close_ticket', 'EXECUTION_ERROR', 'CALLER_ERROR', 1],
  ],
  [
    ['file_warranty_claim', 'SUCCESS', undefined, 1],
    ['file_warranty_claim', 'EXECUTION_ERROR', 'CALLER_ERROR', 1],
    ['file_warranty_claim', 'UNRESOLVED', 'UNRESOLVED', 1],
  ],
];

/** The section's text, from its heading to the next one of the same level. */
function section(readme: string): string {
  const start = readme.indexOf(`\n${SECTION}\n`);
  if (start < 0) throw new Error(`README.md has no "${SECTION}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

function tsBlocks(text: string): string[] {
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

let files: string[] = [];
let blocks: string[] = [];

beforeAll(() => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  blocks = tsBlocks(section(readme));
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  files = blocks.map((code, i) => {
    const file = join(OUT, `example-${i + 1}.ts`);
    writeFileSync(file, code);
    return file;
  });
});

describe('README "Writing a tool"', () => {
  it('sits right before the catalog section and holds the three examples', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const at = readme.indexOf(`\n${SECTION}\n`);
    expect(at).toBeGreaterThan(0);
    expect(readme.indexOf('\n## ', at + 1)).toBe(readme.indexOf(`\n${NEXT_SECTION}\n`));
    expect(blocks).toHaveLength(EXPECTED.length);
    for (const code of blocks) {
      expect(code).toMatch(/from 'toolgate'/);
      expect(code).toMatch(/from 'toolgate\/embedded'/);
      expect(code).toMatch(/^assert\./m);
      expect(code).toMatch(/^export const results = /m);
    }
    expect(blocks[1]).toMatch(/kind: 'forwards-key'/);
    expect(blocks[2]).toMatch(/kind: 'status-check'/);
  });

  for (const [i, expected] of EXPECTED.entries()) {
    it(`example ${i + 1} runs as written and its agent receives what it asserts`, async () => {
      const module = (await import(files[i]!)) as { results: readonly ToolCallResult[] };
      expect(module.results.map((r) => [r.tool, r.outcome, r.error?.code, r.toolInvocations])).toEqual(
        expected,
      );
    }, 30_000);
  }

  it('type-checks as a user of the package compiles it', () => {
    const parsed = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, 'tsconfig.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
        },
      },
    )!;
    const program = ts.createProgram(files, {
      ...parsed.options,
      noEmit: true,
      baseUrl: ROOT,
      paths: PACKAGE_PATHS,
    });
    // Only the examples' own diagnostics: the rest of the tree is type-checked by `npm run typecheck`.
    const problems = files
      .map((file) => program.getSourceFile(file)!)
      .flatMap((source) => [
        ...program.getSyntacticDiagnostics(source),
        ...program.getSemanticDiagnostics(source),
      ])
      .map((d) => {
        const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
        return `${d.file!.fileName.slice(ROOT.length + 1)}:${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
      });
    expect(problems).toEqual([]);
  }, 120_000);
});
