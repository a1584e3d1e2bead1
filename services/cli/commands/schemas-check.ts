import { EVENT_KINDS, type EventKind } from '../../../libs/events/contracts.js';
import { loadSchemas } from '../../../libs/events/schema-files.js';
import { topicNames, valueSubject } from '../../../libs/events/topics.js';
import { FailureError, EXIT } from '../cli-error.js';
import { describe } from '../classify-error.js';
import type { CommandSpec } from '../command.js';
import { checkWithRegistry, type RegistryVerdict } from '../registry-compat.js';
import { checkSchemaHistory, type SchemaCheck } from '../schemas-check.js';
import { formatTable } from '../table.js';

interface SubjectCheck {
  readonly kind: EventKind;
  readonly subject: string;
  readonly verdict: RegistryVerdict;
}

/** `schemas check`: BACKWARD compatibility of the event schemas along their git history (and the registry). */
export const schemasCheckCommand: CommandSpec = {
  path: ['schemas', 'check'],
  summary: 'Check the Avro event schemas for BACKWARD compatibility.',
  details: [
    'Each schema in schemas/ is checked against every earlier committed version and the working tree against the last commit, so a change that would break a consumer of older events fails here (exit 1) before the registry refuses it in production. Needs the source tree with its git history.',
    "With --registry, each schema is also checked by the schema registry against the latest version registered under its subject (<prefix>.<topic>-value) and the subject's own compatibility rule; nothing is registered.",
  ],
  positionals: [],
  options: {
    registry: { type: 'boolean', description: 'Also ask the schema registry (read-only).' },
    prefix: {
      type: 'string',
      valueName: 'prefix',
      description: 'Topic prefix of the registry subjects.',
      defaultText: '$TOOLGATE_TOPIC_PREFIX, else toolgate',
    },
  },
  needs: ['schema-registry'],
  examples: ['toolgate schemas check', 'toolgate schemas check --registry --prefix toolgate'],
  async run({ args, out, config, resources }) {
    let history: SchemaCheck[];
    try {
      history = checkSchemaHistory();
    } catch (err) {
      throw new FailureError(
        `cannot read the schema history: ${describe(err)}`,
        'schemas check runs in a git checkout of the source tree.',
        { cause: err },
      );
    }
    const prefix =
      config.get('TOOLGATE_TOPIC_PREFIX', args.command, { flag: 'prefix', value: args.string('prefix') }) ??
      'toolgate';
    const registry: SubjectCheck[] = [];
    if (args.flag('registry')) {
      const url = resources.schemaRegistryUrl();
      const topics = topicNames(prefix);
      const schemas = loadSchemas();
      for (const kind of EVENT_KINDS) {
        const subject = valueSubject(topics[kind]);
        registry.push({ kind, subject, verdict: await checkWithRegistry(url, subject, schemas[kind]) });
      }
    }
    const ok =
      history.every((h) => h.problems.length === 0) &&
      registry.every((r) => r.verdict.status !== 'incompatible');
    out.json({ ok, history, ...(args.flag('registry') ? { registry } : {}) });
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
    if (registry.length > 0) {
      out.text(
        formatTable(
          [{ header: 'SUBJECT' }, { header: 'REGISTRY' }],
          registry.map((r) => [r.subject, r.verdict.status]),
        ),
      );
      for (const r of registry) {
        if (r.verdict.status === 'incompatible')
          for (const m of r.verdict.messages) out.text(`  ${r.subject}: ${m}`);
      }
    }
    out.text(
      ok
        ? 'OK: every schema is backward compatible.'
        : 'FAIL: a schema change would break readers of older events.',
    );
    return ok ? EXIT.ok : EXIT.failure;
  },
};
