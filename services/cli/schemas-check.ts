import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EVENT_KINDS, SCHEMA_FILE, type EventKind } from '../../libs/events/contracts.js';
import { backwardProblems } from '../../libs/events/schema-compat.js';
import { loadSchemas, schemasDir, type AvroSchemaJson } from '../../libs/events/schema-files.js';
import { topicNames, valueSubject } from '../../libs/events/topics.js';
import { checkWithRegistry, type RegistryVerdict } from './registry-compat.js';

/**
 * The one implementation of the schema compatibility check. `toolgate schemas check` (from source or
 * from a build) and `npm run schemas:check` (this file run by tsx) both reach it through the CLI
 * command, so they read the same schema files and the same baseline.
 *
 * Two baselines:
 * - the schema registry ({@link checkRegisteredSubjects}): the schemas this package publishes (the
 *   files its event codec registers) against the versions registered under their subjects, judged by
 *   the registry. Needs no source tree and no git.
 * - git history ({@link checkSchemaHistory}): in a checkout of the source tree, the working-tree
 *   files against every committed version. A build reads its own copy of the schemas, which git does
 *   not track, so the history is read from the tracked source files ({@link trackedSchemas}).
 */

/** One schema file's verdict: every committed version checked against the one before it. */
export interface SchemaCheck {
  readonly file: string;
  readonly versionsChecked: number;
  readonly problems: readonly string[];
}

/** One registry subject's verdict for the schema of its event kind. */
export interface SubjectCheck {
  readonly kind: EventKind;
  readonly subject: string;
  readonly verdict: RegistryVerdict;
}

/** The schema files under git, found by {@link trackedSchemas}. */
export interface TrackedSchemas {
  /** The directory holding the tracked .avsc files. */
  readonly dir: string;
  /** The top of the git work tree holding it. */
  readonly repoRoot: string;
}

/**
 * There is no git history of the schemas to check against: `reason` says whether there is no git
 * checkout around them at all (an installed package, a container) or git does not track them (a
 * package installed inside another project's checkout).
 */
export class NoSchemaHistoryError extends Error {
  override readonly name = 'NoSchemaHistoryError';
  constructor(
    readonly reason: 'no-checkout' | 'untracked',
    readonly dir: string,
    options?: ErrorOptions,
  ) {
    super(
      reason === 'no-checkout'
        ? `the schemas in ${dir} are not in a git checkout, so there is no history to check them against`
        : `git does not track the schemas in ${dir}, so there is no history to check them against`,
      options,
    );
  }
}

/**
 * The directory of the schemas this package publishes: the files its event codec registers and
 * encodes with (`schemas/` from source, the build's copy beside the compiled modules from a build).
 */
export function publishedSchemasDir(): string {
  return schemasDir();
}

/**
 * Where the git-baseline check reads: the published schema directory when git tracks it (a source
 * checkout), else the package root's `schemas/` when git tracks that (a build inside the checkout,
 * whose copy is ignored by git). Only these two places are looked at, so a package installed inside
 * some other project never picks up that project's files. Throws {@link NoSchemaHistoryError} when
 * neither is tracked, or git is not installed.
 */
export function trackedSchemas(published = publishedSchemasDir()): TrackedSchemas {
  let insideCheckout = false;
  for (const dir of schemaDirCandidates(published)) {
    const repoRoot = workTreeRoot(dir);
    if (repoRoot === undefined) continue;
    insideCheckout = true;
    if (tracksAll(dir)) return { dir, repoRoot };
  }
  throw new NoSchemaHistoryError(insideCheckout ? 'untracked' : 'no-checkout', published);
}

/**
 * Checks every schema's history for BACKWARD compatibility: each committed version against its
 * predecessor, and the working-tree file against the last commit. A schema change that would break a
 * consumer reading older events is caught here, before the registry refuses it in production.
 * Throws {@link NoSchemaHistoryError} when there is no git history (see {@link trackedSchemas}).
 */
export function checkSchemaHistory(source: TrackedSchemas = trackedSchemas()): SchemaCheck[] {
  const { dir, repoRoot } = source;
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

/**
 * Asks the registry at `registryUrl` (Confluent-compatible API) about each event kind's schema from
 * `dir` (by default the published one) under its subject `<prefix>.<topic>-value`. Read-only. Throws
 * what {@link checkWithRegistry} throws.
 */
export async function checkRegisteredSubjects(
  registryUrl: string,
  prefix: string,
  dir = publishedSchemasDir(),
): Promise<SubjectCheck[]> {
  const topics = topicNames(prefix);
  const schemas = loadSchemas(dir);
  const checks: SubjectCheck[] = [];
  for (const kind of EVENT_KINDS) {
    const subject = valueSubject(topics[kind]);
    checks.push({ kind, subject, verdict: await checkWithRegistry(registryUrl, subject, schemas[kind]) });
  }
  return checks;
}

/**
 * The schema files whose published copy differs from the tracked source file, as paths relative to
 * the work tree: a build made before the last schema edit. Empty when they are the same directory.
 */
export function staleCopies(published: string, source: TrackedSchemas): string[] {
  if (samePath(published, source.dir)) return [];
  return EVENT_KINDS.map((kind) => SCHEMA_FILE[kind])
    .filter(
      (file) => readFileSync(join(published, file), 'utf8') !== readFileSync(join(source.dir, file), 'utf8'),
    )
    .map((file) => relative(source.repoRoot, join(source.dir, file)));
}

function schemaDirCandidates(published: string): string[] {
  const packageRoot = join(published, '..', '..', 'schemas');
  const holdsAll = (dir: string): boolean =>
    EVENT_KINDS.every((kind) => existsSync(join(dir, SCHEMA_FILE[kind])));
  return samePath(packageRoot, published) || !holdsAll(packageRoot) ? [published] : [published, packageRoot];
}

function workTreeRoot(dir: string): string | undefined {
  try {
    return git(dir, ['rev-parse', '--show-toplevel']).trim();
  } catch {
    // Not a checkout, or no git at all: either way there is no history here.
    return undefined;
  }
}

function tracksAll(dir: string): boolean {
  try {
    git(dir, ['ls-files', '--error-unmatch', '--', ...EVENT_KINDS.map((k) => SCHEMA_FILE[k])]);
    return true;
  } catch {
    return false;
  }
}

function samePath(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return a === b;
  }
}

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

// `npm run schemas:check` runs this file: the same as `toolgate schemas check` (which imports this
// module, hence the dynamic import: a static one would be a cycle).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void import('./run-cli.js').then(async ({ runCli }) => {
    process.exitCode = await runCli(['schemas', 'check', ...process.argv.slice(2)], {
      stdout: process.stdout,
      stderr: process.stderr,
    });
  });
}
