import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { writeNode20FsHook } from './node20-fs-hook.js';

const require = createRequire(import.meta.url);
const CLI = join(require.resolve('@modelcontextprotocol/conformance/package.json'), '..', 'dist', 'index.js');

/** One check of one scenario, as the suite writes it to `checks.json`. */
export interface ConformanceCheck {
  readonly id: string;
  readonly status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  readonly errorMessage?: string;
}

export interface ConformanceRun {
  readonly exitCode: number;
  readonly output: string;
  /** scenario → its checks, from every `checks.json` the run wrote. */
  readonly scenarios: ReadonlyMap<string, readonly ConformanceCheck[]>;
}

/**
 * Runs the pinned conformance CLI's server suite for one revision (`--requirements`) against `url`,
 * with `baseline` as its expected failures, writing results under `outputDir`. Node 20 lacks the
 * `fs.globSync` the CLI imports; {@link writeNode20FsHook} supplies it.
 */
export function runConformance(options: {
  readonly url: string;
  readonly revision: '2025-11-25' | '2026-07-28';
  readonly baseline: string;
  readonly outputDir: string;
}): Promise<ConformanceRun> {
  const args = [
    '--import',
    writeNode20FsHook(),
    CLI,
    'server',
    '--url',
    options.url,
    '--requirements',
    options.revision,
    '--expected-failures',
    options.baseline,
    '--output-dir',
    options.outputDir,
    '--timeout',
    '20000',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('close', (code) =>
      resolve({ exitCode: code ?? -1, output, scenarios: readChecks(options.outputDir) }),
    );
  });
}

/** `<dir>/server-<scenario>-<timestamp>/checks.json` → scenario → checks. */
function readChecks(dir: string): Map<string, ConformanceCheck[]> {
  const scenarios = new Map<string, ConformanceCheck[]>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const scenario = entry.name.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    const checks = JSON.parse(
      readFileSync(join(dir, entry.name, 'checks.json'), 'utf8'),
    ) as ConformanceCheck[];
    scenarios.set(scenario, checks);
  }
  return scenarios;
}
