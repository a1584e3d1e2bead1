import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { EVENT_KINDS, SCHEMA_FILE } from '../../libs/events/contracts.js';
import { backwardProblems } from '../../libs/events/schema-compat.js';
import { schemasDir, type AvroSchemaJson } from '../../libs/events/schema-files.js';

/** One schema file's verdict: every committed version checked against the one before it. */
export interface SchemaCheck {
  readonly file: string;
  readonly versionsChecked: number;
  readonly problems: readonly string[];
}

/**
 * Checks every schema's history for BACKWARD compatibility: each committed version against its
 * predecessor, and the working-tree file against the last commit. A schema change that would break a
 * consumer reading older events is caught here, before the registry refuses it in production.
 */
export function checkSchemaHistory(dir = schemasDir()): SchemaCheck[] {
  const repoRoot = git(dir, ['rev-parse', '--show-toplevel']).trim();
  return EVENT_KINDS.map((kind) => {
    const path = relative(repoRoot, join(dir, SCHEMA_FILE[kind]));
    const commits = git(repoRoot, ['log', '--format=%H', '--', path]).split('\n').filter(Boolean).reverse();
    const versions: { label: string; schema: AvroSchemaJson }[] = commits.map((c) => ({
      label: c.slice(0, 10),
      schema: JSON.parse(git(repoRoot, ['show', `${c}:${path}`])) as AvroSchemaJson,
    }));
    versions.push({
      label: 'working tree',
      schema: JSON.parse(readFileSync(join(dir, SCHEMA_FILE[kind]), 'utf8')) as AvroSchemaJson,
    });
    const problems: string[] = [];
    for (let i = 1; i < versions.length; i += 1) {
      const prev = versions[i - 1]!;
      const next = versions[i]!;
      for (const p of backwardProblems(prev.schema, next.schema))
        problems.push(`${prev.label} → ${next.label}: ${p}`);
    }
    return { file: path, versionsChecked: versions.length, problems };
  });
}

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

// `npm run schemas:check` runs this file: the same as `toolgate schemas check` (which imports this
// module, hence the dynamic import: a static one would be a cycle).
if (import.meta.url === `file://${process.argv[1]}`) {
  void import('./run-cli.js').then(async ({ runCli }) => {
    process.exitCode = await runCli(['schemas', 'check', ...process.argv.slice(2)], {
      stdout: process.stdout,
      stderr: process.stderr,
    });
  });
}
