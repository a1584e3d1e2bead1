import type { CaseFilter, CaseState } from '../../../libs/ports/case-store.js';
import { UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command.js';
import { casesTable } from '../dlq-format.js';
import { openOperations } from '../dlq-operations.js';
import { limitOption, listLimit, printListing } from '../listing.js';
import { optional } from '../optional.js';

/** The case states, as `--state` takes them. */
export const CASE_STATES: readonly CaseState[] = [
  'open',
  'needs_manual',
  'resolved_succeeded',
  'resolved_failed',
];

/** `dlq list`: reconciliation cases, oldest first (soonest due first with --due). */
export const dlqListCommand: CommandSpec = {
  path: ['dlq', 'list'],
  summary: 'List reconciliation cases (dead-lettered calls), e.g. those needing a person.',
  details: [
    'Every dead-lettered call has one case: open (the reconciler checks its status), needs_manual (a person must decide), or resolved. Oldest first; with --due, only open cases whose next status check is due now, soonest first.',
  ],
  positionals: [],
  options: {
    state: {
      type: 'string',
      valueName: 'state',
      choices: CASE_STATES,
      description: 'Only cases in this state.',
    },
    tenant: { type: 'string', valueName: 'id', description: 'Only this tenant.' },
    tool: { type: 'string', valueName: 'name', description: 'Only this tool.' },
    due: { type: 'boolean', description: 'Only open cases due for a status check now.' },
    limit: limitOption('cases'),
  },
  needs: ['postgres'],
  examples: [
    'toolgate dlq list --state needs_manual',
    'toolgate dlq list --tenant t1 --tool issue_refund --json',
  ],
  async run({ args, out, config, resources, io }) {
    const limit = listLimit(args);
    const state = args.string('state') as CaseState | undefined;
    if (args.flag('due') && state !== undefined && state !== 'open') {
      throw new UsageError('--due lists open cases only; drop --state or use --state open.', args.command);
    }
    const filter: CaseFilter = {
      ...optional('state', state),
      ...optional('tenant', args.string('tenant')),
      ...optional('tool', args.string('tool')),
      ...optional('dueBeforeMs', args.flag('due') ? resources.clock.now() : undefined),
      limit,
    };
    const ops = await openOperations({ args, config, resources, out, given: io.operations }, 'read');
    return printListing(out, {
      key: 'cases',
      noun: 'case',
      none: 'No cases match.',
      rows: await ops.listCases(filter),
      limit,
      table: casesTable,
    });
  },
};
