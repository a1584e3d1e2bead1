import { OUTCOMES, type Outcome } from '../../../libs/core/outcome.js';
import type { AuditQuery, AuditSource } from '../../../libs/ports/audit-store.js';
import { auditRecordsTable } from '../audit-format.js';
import type { CommandSpec } from '../command.js';
import { limitOption, listLimit, printListing, timeWindow, timeWindowOptions } from '../listing.js';
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
  'mcp-gateway': 'mcp-gateway',
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
    ...timeWindowOptions('Records'),
    outcome: { type: 'string', valueName: 'outcome', choices: OUTCOMES, description: 'Only this outcome.' },
    source: {
      type: 'string',
      valueName: 'source',
      choices: Object.keys(SOURCE_CHOICES),
      description:
        'Only records of this producer: executor, reconciler, ops (a person through the ops CLI; operator is the same), or mcp-gateway (one record per MCP request).',
    },
    limit: limitOption('records'),
    desc: { type: 'boolean', description: 'Newest first.' },
  },
  needs: ['postgres'],
  examples: [
    'toolgate audit query --tool issue_refund --from 2025-03-01 --to 2025-03-02',
    'toolgate audit query --principal user-7 --outcome UNAUTHORIZED --json',
    'toolgate audit query --source ops --principal operator:ann',
  ],
  async run({ args, out, resources }) {
    const limit = listLimit(args);
    const { fromMs, toMs } = timeWindow(args);
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
    return printListing(out, {
      key: 'records',
      noun: 'record',
      none: 'No audit records match.',
      rows: await store.query(filter),
      limit,
      table: auditRecordsTable,
    });
  },
};
