import type { CommandSpec } from '../command.js';
import { ACTION_NEEDS, ACTION_OPTIONS, actor, inlineOrFile, runCaseAction } from './dlq-action-options.js';

/** `dlq redrive`: another go for a case a person or the checker gave up on. */
export const dlqRedriveCommand: CommandSpec = {
  path: ['dlq', 'redrive'],
  summary: 'Give a needs_manual or resolved_failed case another go: recheck or re-submit.',
  details: [
    "What a redrive does depends on the case and its tool's retry safety (the same rule 'dlq show' prints its hints from). UNRESOLVED (outcome unknown): a tool with a status check reopens for a new round of checks; a read-only or forwards-key tool (the downstream deduplicates on the idempotency key it is given) is re-submitted, its UNRESOLVED idempotency answer retired first so the executor runs it instead of answering 'unknown' again; a tool with retry safety none is refused with the reason (running it again could apply the effect twice): find out from the downstream and resolve the case by hand. POISON or EXHAUSTED (the action was not carried out): re-submitted when the original request is known, else refused.",
    'A re-submission goes to the calls topic with the same call id and idempotency key (the executor keeps it to one effect), with its full arguments read back from the calls topic (cases keep only the allow-listed fields; a call past the retention of that topic cannot be re-submitted), signed with the principal assertion you give (dead letters never keep one); the case reopens first and its checks start after a grace period. A re-submission that cannot be published hands the case back to needs_manual. A call whose idempotency record already holds a verdict (a person or a check resolved it) is not re-submitted: the verdict answers the call; run it again as a new step. A refused redrive changes nothing. Audited under your principal (source ops).',
    'Exit 1 when the case does not exist, was moved meanwhile, or cannot be redriven; exit 2 when a re-submission needs --assertion.',
  ],
  positionals: [{ name: 'caseId', description: 'The case to redrive.' }],
  options: {
    ...ACTION_OPTIONS,
    assertion: {
      type: 'string',
      valueName: 'jwt',
      description: 'For a re-submission: the signed principal assertion to send it with.',
    },
    'assertion-file': {
      type: 'string',
      valueName: 'path',
      description: 'The same, read from a file (keeps it out of shell history).',
    },
  },
  needs: ACTION_NEEDS,
  examples: [
    'toolgate dlq redrive 5f0c… --by ann --note "payments API is back; check again"',
    'toolgate dlq redrive 5f0c… --by ann --note "re-submit after fix" --assertion-file principal.jwt',
  ],
  async run(ctx) {
    const caseId = ctx.args.positional(0);
    const { by, note } = actor(ctx.args);
    const assertion = inlineOrFile(ctx, 'assertion')?.trim();
    return runCaseAction(ctx, caseId, {
      verb: 'redrive',
      done: 'Redriven',
      run: (ops) =>
        ops.redrive(caseId, { by, note, ...(assertion ? { principalAssertion: assertion } : {}) }),
    });
  },
};
