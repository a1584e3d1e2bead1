import { MAX_QUERY_LIMIT } from '../../../libs/audit/query.js';
import { OUTCOMES, type Outcome } from '../../../libs/core/outcome.js';
import type { AuditQuery, AuditSource } from '../../../libs/ports/audit-store.js';
import { auditRecordsTable } from '../audit-format.js';
import { EXIT, UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command.js';
import { optional } from '../optional.js';

/**
 * `--source` values and the stored source each selects. A person's records are stored with source
 * `operator` (the value the audit and result events carry, and the one already in every hash-chained
 * row); `ops` names the same producer, as the CLI calls it.
 */
const SOURCE_CHOICES: Readonly<Record<string, AuditSource>> = {
  executor: 'executor',
  reconciler: 'reconciler',
  ops: 'operator',
  operator: 'operator',
};

function sourceFilter(value: string | undefined): AuditSource | undefined {
  return value === undefined ? undefined : SOURCE_CHOICES[value];
}

/** `audit query`: audit records matching every given filter, oldest first (or newest with --desc). */
export const auditQueryCommand: CommandSpec = {
  path: ['audit', 'query'],
  summary: 'Audit records by tool, principal, tenant, resource, time, outcome or source.',
  details: [
    'Every attempt has one audit record, refusals included. All given filters must match. Records are ordered by the time they were recorded (oldest first unless --desc); --from is inclusive, --to exclusive.',
  ],
  positionals: [],
  options: {
    tool: { type: 'string', valueName: 'name', description: 'Only this tool.' },
    principal: { type: 'string', valueName: 'id', description: 'Only attempts by this principal.' },
    tenant: { type: 'string', valueName: 'id', description: 'Only this tenant.' },
    resource: {
      type: 'string',
      valueName: 'key',
      description: 'Only this full resource key, e.g. t1:order:O-5512.',
    },
    call: { type: 'string', valueName: 'id', description: 'Only this call id.' },
    trace: { type: 'string', valueName: 'id', description: 'Only this trace id.' },
    from: {
      type: 'string',
      valueName: 'ISO',
      description: 'Recorded at or after this time (ISO 8601, date, or epoch ms).',
    },
    to: { type: 'string', valueName: 'ISO', description: 'Recorded before this time.' },
    outcome: { type: 'string', valueName: 'outcome', choices: OUTCOMES, description: 'Only this outcome.' },
    source: {
      type: 'string',
      valueName: 'source',
      choices: Object.keys(SOURCE_CHOICES),
      description:
        'Only records of this producer: executor, reconciler, or ops (a person through the ops CLI; operator is the same).',
    },
    limit: {
      type: 'string',
      valueName: 'n',
      description: `At most n records (1-${MAX_QUERY_LIMIT}).`,
      defaultText: '100',
    },
    desc: { type: 'boolean', description: 'Newest first.' },
  },
  needs: ['postgres'],
  examples: [
    'toolgate audit query --tool issue_refund --from 2025-03-01 --to 2025-03-02',
    'toolgate audit query --principal user-7 --outcome UNAUTHORIZED --json',
    'toolgate audit query --source ops --principal operator:ann',
  ],
  async run({ args, out, resources }) {
    const limit = args.int('limit', { min: 1, max: MAX_QUERY_LIMIT }, 100)!;
    const fromMs = args.time('from');
    const toMs = args.time('to');
    if (fromMs !== undefined && toMs !== undefined && fromMs >= toMs) {
      throw new UsageError('--from must be earlier than --to.', args.command);
    }
    const filter: AuditQuery = {
      ...optional('tool', args.string('tool')),
      ...optional('principalId', args.string('principal')),
      ...optional('tenant', args.string('tenant')),
      ...optional('resourceKey', args.string('resource')),
      ...optional('callId', args.string('call')),
      ...optional('traceId', args.string('trace')),
      ...optional('outcome', args.string('outcome') as Outcome | undefined),
      ...optional('source', sourceFilter(args.string('source'))),
      ...optional('fromMs', fromMs),
      ...optional('toMs', toMs),
      limit,
      order: args.flag('desc') ? 'desc' : 'asc',
    };
    const store = await resources.auditStore();
    const records = await store.query(filter);
    out.json({ count: records.length, limit, truncated: records.length === limit, records });
    if (records.length === 0) {
      out.text('No audit records match.');
      return EXIT.ok;
    }
    out.text(auditRecordsTable(records));
    out.text(`${records.length} record${records.length === 1 ? '' : 's'}.`);
    if (records.length === limit)
      out.note(`Showing the first ${limit}: raise --limit or narrow the filters to see more.`);
    return EXIT.ok;
  },
};
