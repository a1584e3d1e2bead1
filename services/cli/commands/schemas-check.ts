import { FailureError, EXIT, UsageError } from '../cli-error.js';
import { describe } from '../classify-error.js';
import type { CommandContext, CommandSpec } from '../command.js';
import { redactUrl } from '../config.js';
import type { Output } from '../output.js';
import {
  checkRegisteredSubjects,
  checkSchemaHistory,
  NoSchemaHistoryError,
  publishedSchemasDir,
  staleCopies,
  trackedSchemas,
  type SchemaCheck,
  type TrackedSchemas,
} from '../schemas-check.js';
import { formatTable } from '../table.js';

const COMMAND = 'schemas check';

/**
 * `schemas check`: BACKWARD compatibility of the event schemas, against the subjects in a schema
 * registry (`--registry <url>`, works from an installed package) or along their git history (in a
 * checkout of the source tree). Exit 0 compatible, 1 a schema would break readers of older events,
 * 2 no baseline (no `--registry` outside a git checkout) or a bad flag, 3 registry unreachable.
 */
export const schemasCheckCommand: CommandSpec = {
  path: ['schemas', 'check'],
  summary: 'Check the Avro event schemas for BACKWARD compatibility.',
  details: [
    "With --registry <url>, the schemas this package publishes (the files its executors register) are checked by that Confluent-compatible schema registry against the latest version registered under each subject (<prefix>.<topic>-value), under the subject's own compatibility rule. Nothing is registered, and no source tree or git is needed: this is the check for an installed package.",
    'Without --registry, each schema in the git checkout of the source tree is checked against every earlier committed version, and the working tree against the last commit. A build run inside the checkout reads the tracked source files, not its own copy. Outside a git checkout this is a usage error (exit 2): give --registry.',
    'A change that would break a consumer of older events fails (exit 1) before the registry refuses it in production.',
  ],
  positionals: [],
  options: {
    registry: {
      type: 'string',
      valueName: 'url',
      description: 'Check against this schema registry (Confluent-compatible API base URL) instead of git.',
    },
    prefix: {
      type: 'string',
      valueName: 'prefix',
      description: 'Topic prefix of the registry subjects.',
      defaultText: '$TOOLGATE_TOPIC_PREFIX, else toolgate',
    },
  },
  needs: [],
  examples: [
    'toolgate schemas check --registry http://127.0.0.1:18081/apis/ccompat/v7 --prefix toolgate',
    'toolgate schemas check',
  ],
  async run(ctx) {
    const registryFlag = ctx.args.string('registry');
    if (registryFlag === undefined) return checkAgainstHistory(ctx);
    // Parsed like SCHEMA_REGISTRY_URL (http(s)://…, trailing slashes dropped); the flag is the only source.
    const url = ctx.config.require('SCHEMA_REGISTRY_URL', COMMAND, { flag: 'registry', value: registryFlag });
    return checkAgainstRegistry(ctx, url);
  },
};

async function checkAgainstRegistry({ args, out, config }: CommandContext, url: string): Promise<number> {
  const prefix =
    config.get('TOOLGATE_TOPIC_PREFIX', COMMAND, { flag: 'prefix', value: args.string('prefix') }) ??
    'toolgate';
  const schemas = publishedSchemasDir();
  const registry = await checkRegisteredSubjects(url, prefix, schemas);
  const stale = staleAgainstSource(schemas);
  const ok = registry.every((r) => r.verdict.status !== 'incompatible');
  out.json({ ok, baseline: 'registry', schemas, registry, staleCopies: stale });
  out.text(`schemas: ${schemas}`);
  out.text(
    formatTable(
      [{ header: 'SUBJECT' }, { header: 'LATEST', align: 'right' }, { header: 'REGISTRY' }],
      registry.map((r) => [
        r.subject,
        r.verdict.status === 'not-registered' ? '-' : (r.verdict.latestVersion ?? '?'),
        r.verdict.status,
      ]),
    ),
  );
  for (const r of registry) {
    if (r.verdict.status === 'incompatible')
      for (const m of r.verdict.messages) out.text(`  ${r.subject}: ${m}`);
  }
  if (registry.every((r) => r.verdict.status === 'not-registered')) {
    out.note(
      `note: no subject under prefix '${prefix}' is registered at ${redactUrl(url)}, so nothing was compared; check --prefix.`,
    );
  }
  noteStale(out, schemas, stale);
  printVerdict(out, ok);
  return ok ? EXIT.ok : EXIT.failure;
}

function checkAgainstHistory({ out }: CommandContext): number {
  const schemas = publishedSchemasDir();
  let source: TrackedSchemas;
  let history: SchemaCheck[];
  try {
    source = trackedSchemas(schemas);
    history = checkSchemaHistory(source);
  } catch (err) {
    if (err instanceof NoSchemaHistoryError) {
      throw new UsageError(
        `${err.message}.`,
        COMMAND,
        "Give --registry <url> to check this package's schemas against the subjects in the schema registry.",
      );
    }
    throw new FailureError(`cannot read the schema history: ${describe(err)}`, undefined, { cause: err });
  }
  const stale = staleCopies(schemas, source);
  const ok = history.every((h) => h.problems.length === 0);
  out.json({ ok, baseline: 'git', schemas: source.dir, history, staleCopies: stale });
  out.text(
    formatTable(
      [{ header: 'SCHEMA' }, { header: 'VERSIONS', align: 'right' }, { header: 'RESULT' }],
      history.map((h) => [
        h.file,
        h.versionsChecked,
        h.problems.length === 0 ? 'ok' : `FAIL (${h.problems.length})`,
      ]),
    ),
  );
  for (const h of history) for (const p of h.problems) out.text(`  ${h.file}: ${p}`);
  noteStale(out, schemas, stale);
  printVerdict(out, ok);
  return ok ? EXIT.ok : EXIT.failure;
}

/** Best effort: a build's copy compared with the tracked source files, when there are any. */
function staleAgainstSource(published: string): string[] {
  try {
    return staleCopies(published, trackedSchemas(published));
  } catch {
    return [];
  }
}

function noteStale(out: Output, published: string, stale: readonly string[]): void {
  if (stale.length === 0) return;
  out.note(
    `note: the build's copy in ${published} differs from ${stale.join(', ')} in the source tree; the build publishes its copy until rebuilt (npm run build).`,
  );
}

function printVerdict(out: Output, ok: boolean): void {
  out.text(
    ok
      ? 'OK: every schema is backward compatible.'
      : 'FAIL: a schema change would break readers of older events.',
  );
}
