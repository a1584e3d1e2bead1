import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * A `node:fs` that re-exports the real one and adds the `globSync` node:fs has only from Node 22,
 * for the patterns of the form `**` + `/<name>` the conformance CLI uses (it imports `globSync` and fails to load on
 * Node 20 without it). Walks the tree under `cwd` and returns matching paths relative to it.
 */
const FS_SHIM = String.raw`
import * as fs from 'node:fs';
import { join, relative } from 'node:path';
export * from 'node:fs';
export default fs.default ?? fs;
export function globSync(pattern, options = {}) {
  if (typeof fs.globSync === 'function') return fs.globSync(pattern, options);
  const match = /^\*\*\/([^*?\[\]{}/]+)$/.exec(pattern);
  if (match === null) throw new Error('globSync shim supports only **/<name> patterns, got ' + pattern);
  const root = options.cwd ?? process.cwd();
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === match[1]) found.push(relative(root, path));
    }
  };
  if (fs.existsSync(root)) walk(root);
  return found.sort();
}
`;

/**
 * Writes an ESM loader (and the module that registers it) into a fresh temporary directory and
 * returns the path to pass to `node --import`: `fs` and `node:fs` then resolve to the shim above,
 * everything else as usual. Node 22 and later use their own `globSync`.
 */
export function writeNode20FsHook(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-node20-fs-'));
  const shimUrl = `data:text/javascript;base64,${Buffer.from(FS_SHIM, 'utf8').toString('base64')}`;
  const loader = [
    `const SHIM = ${JSON.stringify(shimUrl)};`,
    'export async function resolve(specifier, context, next) {',
    "  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL !== SHIM) {",
    '    return { url: SHIM, shortCircuit: true };',
    '  }',
    '  return next(specifier, context);',
    '}',
  ].join('\n');
  writeFileSync(join(dir, 'loader.mjs'), loader);
  const hook = join(dir, 'hook.mjs');
  writeFileSync(
    hook,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'loader.mjs')).href)});\n`,
  );
  return hook;
}
