import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { schemasDir } from '../../../libs/events/schema-files.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import {
  checkSchemaHistory,
  NoSchemaHistoryError,
  staleCopies,
  trackedSchemas,
} from '../../../services/cli/schemas-check.js';
import { cli } from './capture.js';

/**
 * Where the git-baseline check reads, in the layouts the check runs in: the source checkout, a build
 * inside it (whose schema copy git ignores), an installed package with no checkout around it, and a
 * package installed inside another project's checkout. Each layout is a real directory with a real
 * git repository in a temp dir.
 */
const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'toolgate-schemas-')));
  temps.push(dir);
  return dir;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A checkout with schemas/ committed and a build's copy in dist/schemas, ignored like the real one. */
function checkoutWithBuild(): { root: string; source: string; copy: string } {
  const root = tempDir();
  const source = join(root, 'schemas');
  const copy = join(root, 'dist', 'schemas');
  cpSync(schemasDir(), source, { recursive: true });
  writeFileSync(join(root, '.gitignore'), 'dist/\n');
  git(root, 'init', '-q');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'schemas');
  cpSync(source, copy, { recursive: true });
  return { root, source, copy };
}

/** Adds a field without a default to the audit schema in `dir`: readers of older events break. */
function breakAuditSchema(dir: string): void {
  const file = join(dir, 'audit-record.avsc');
  const schema = JSON.parse(readFileSync(file, 'utf8')) as { fields: unknown[] };
  schema.fields.push({ name: 'mandatoryNewField', type: 'string' });
  writeFileSync(file, JSON.stringify(schema, null, 2));
}

describe('which schema files the git baseline reads', () => {
  it('from the source tree: its own schemas/, tracked in this repository', () => {
    const tracked = trackedSchemas();
    expect(tracked.dir).toBe(schemasDir());
    expect(checkSchemaHistory(tracked).every((h) => h.versionsChecked >= 2)).toBe(true);
  });

  it("from a build inside the checkout: the tracked source files, not the build's ignored copy", () => {
    const { root, source, copy } = checkoutWithBuild();
    breakAuditSchema(source);
    const tracked = trackedSchemas(copy);
    expect(tracked).toEqual({ dir: source, repoRoot: root });
    const history = checkSchemaHistory(tracked);
    const audit = history.find((h) => h.file === 'schemas/audit-record.avsc');
    // The committed version and the working tree: the breaking edit is seen (the copy has none).
    expect(audit?.versionsChecked).toBe(2);
    expect(audit?.problems).toEqual([expect.stringContaining('AuditRecord.mandatoryNewField')]);
    expect(history.filter((h) => h.problems.length > 0)).toHaveLength(1);
    expect(staleCopies(copy, tracked)).toEqual(['schemas/audit-record.avsc']);
  });

  it('a build whose copy matches the source has no stale copies', () => {
    const { copy } = checkoutWithBuild();
    expect(staleCopies(copy, trackedSchemas(copy))).toEqual([]);
  });

  it('an installed package outside any checkout has no history (no-checkout)', () => {
    const copy = join(tempDir(), 'node_modules', 'toolgate', 'dist', 'schemas');
    cpSync(schemasDir(), copy, { recursive: true });
    // The premise: no repository around the temp dir (a machine with one at / would void the test).
    expect(() => git(copy, 'rev-parse', '--show-toplevel')).toThrow();
    expect(() => trackedSchemas(copy)).toThrow(NoSchemaHistoryError);
    expect(() => trackedSchemas(copy)).toThrow(expect.objectContaining({ reason: 'no-checkout' }));
  });

  it("a package installed inside another project's checkout is not tracked there (untracked)", () => {
    const project = tempDir();
    const packageRoot = join(project, 'node_modules', 'toolgate');
    cpSync(schemasDir(), join(packageRoot, 'dist', 'schemas'), { recursive: true });
    cpSync(schemasDir(), join(packageRoot, 'schemas'), { recursive: true });
    // The project's own files of the same names, tracked: never the package's baseline.
    cpSync(schemasDir(), join(project, 'schemas'), { recursive: true });
    writeFileSync(join(project, '.gitignore'), 'node_modules/\n');
    git(project, 'init', '-q');
    git(project, 'add', '.');
    git(project, 'commit', '-q', '-m', 'project');
    expect(() => trackedSchemas(join(packageRoot, 'dist', 'schemas'))).toThrow(
      expect.objectContaining({ name: 'NoSchemaHistoryError', reason: 'untracked' }),
    );
  });
});

describe('schemas check --registry flag', () => {
  it('needs a URL: a bare --registry is a usage error (exit 2)', async () => {
    for (const argv of [
      ['schemas', 'check', '--registry'],
      ['schemas', 'check', '--registry', '--prefix', 'p'],
    ]) {
      const run = await cli(argv);
      expect(run.code).toBe(EXIT.usage);
      expect(run.stderr).toContain('--registry needs a value: --registry <url>');
    }
  });

  it('a URL that is not http(s) is a usage error naming the flag, before anything is contacted', async () => {
    const run = await cli(['schemas', 'check', '--registry', 'ftp://registry.example']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain('--registry: expected http(s)://…');
  });

  it('the old --schema-registry-url flag is gone rather than silently ignored', async () => {
    const run = await cli(['schemas', 'check', '--schema-registry-url', 'http://127.0.0.1:1']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain('unknown option --schema-registry-url');
  });
});
