import { UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command.js';
import { ACTION_NEEDS, ACTION_OPTIONS, actor, inlineOrFile, runCaseAction } from './dlq-action-options.js';

/** `dlq resolve`: a person's verdict on a case. */
export const dlqResolveCommand: CommandSpec = {
  path: ['dlq', 'resolve'],
  summary: 'Resolve a case by hand: the effect happened (succeeded) or did not (failed).',
  details: [
    "For a case that is open or needs_manual, after finding out from the downstream what happened. The case moves to resolved_succeeded or resolved_failed; the verdict is recorded in the call's idempotency record, whatever the case's reason (so a retried call, or a re-submission still queued, is answered with it instead of running); while an executor is running the call the resolution is refused (exit 1: look again once it has finished); an audit record and a superseding result (source operator) go out. A succeeded result given with --result must match the tool's output schema and is redacted by it.",
    'Exit 1 when the case does not exist, was moved by someone else meanwhile (nothing is written), or cannot make this move; or when a delivery stayed incomplete.',
  ],
  positionals: [{ name: 'caseId', description: 'The case to resolve.' }],
  options: {
    outcome: {
      type: 'string',
      choices: ['succeeded', 'failed'],
      required: true,
      description: 'What happened downstream.',
    },
    ...ACTION_OPTIONS,
    result: {
      type: 'string',
      valueName: 'json',
      description: "For succeeded: the call's result as JSON, as the downstream shows it.",
    },
    'result-file': { type: 'string', valueName: 'path', description: 'The same, read from a file.' },
  },
  needs: ACTION_NEEDS,
  examples: [
    'toolgate dlq resolve 5f0c… --outcome failed --by ann --note "payments shows no refund for O-5512"',
    'toolgate dlq resolve 5f0c… --outcome succeeded --by ann --note "ledger entry R-88" --result-file result.json',
  ],
  async run(ctx) {
    const { args } = ctx;
    const caseId = args.positional(0);
    const outcome = args.string('outcome') as 'succeeded' | 'failed';
    const { by, note } = actor(args);
    const resultText = inlineOrFile(ctx, 'result');
    if (resultText !== undefined && outcome === 'failed') {
      throw new UsageError('a failed resolution carries no --result.', args.command);
    }
    let result: unknown;
    if (resultText !== undefined) {
      try {
        result = JSON.parse(resultText);
      } catch {
        throw new UsageError('--result is not valid JSON.', args.command);
      }
    }
    return runCaseAction(ctx, caseId, {
      verb: 'resolve',
      done: 'Resolved',
      run: (ops) =>
        ops.resolveByHand(caseId, { outcome, by, note, ...(resultText === undefined ? {} : { result }) }),
    });
  },
};
