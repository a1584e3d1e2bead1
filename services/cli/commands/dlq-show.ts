import { EXIT, FailureError } from '../cli-error.js';
import type { CommandSpec } from '../command.js';
import { caseDetails } from '../dlq-format.js';
import { openOperations } from '../dlq-operations.js';
import { ACTION_OPTIONS } from './dlq-action-options.js';

/** `dlq show`: one case in full. */
export const dlqShowCommand: CommandSpec = {
  path: ['dlq', 'show'],
  summary: 'Show one case: its call, why it was dead-lettered, checks, history, next steps.',
  details: [
    'Finds the case by its id, or with --call / --dead-letter by the call or dead letter it is about. Every history note is shown in full. The next steps follow the rule dlq redrive applies: a redrive is offered only when it would not be refused (e.g. not for a POISON case without its request, nor for an UNRESOLVED call of a tool with retry safety none), otherwise the reason is shown. Exit 1 when there is no such case.',
  ],
  positionals: [{ name: 'caseId', description: 'The case id (or, with --call / --dead-letter, that id).' }],
  options: {
    call: { type: 'boolean', description: '<caseId> is a call id.' },
    'dead-letter': { type: 'boolean', description: '<caseId> is a dead-letter id.' },
    catalog: ACTION_OPTIONS.catalog!,
  },
  needs: ['postgres'],
  examples: ['toolgate dlq show 5f0c…', 'toolgate dlq show call-123 --call --json'],
  async run({ args, out, config, resources, io }) {
    const id = args.positional(0);
    const ref = args.flag('call') ? { callId: id } : args.flag('dead-letter') ? { deadLetterId: id } : id;
    const ops = await openOperations({ args, config, resources, out, given: io.operations }, 'show');
    const view = await ops.showCase(ref);
    if (view === undefined) {
      const what =
        typeof ref === 'string'
          ? `case ${id}`
          : 'callId' in ref
            ? `case for call ${id}`
            : `case for dead letter ${id}`;
      throw new FailureError(`no ${what}.`, "List cases with 'toolgate dlq list'.");
    }
    out.json(view);
    out.text(caseDetails(view));
    return EXIT.ok;
  },
};
