import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { MAX_NOTE_LENGTH } from '../../../libs/reconcile/case-model.js';
import type { OperationResult, Operations } from '../../../libs/reconcile/operation-types.js';
import type { Args } from '../args.js';
import { EXIT, FailureError, UsageError } from '../cli-error.js';
import type { CommandContext, Dependency, OptionSpec } from '../command.js';
import { operationSummary } from '../dlq-format.js';
import { openOperations } from '../dlq-operations.js';

/** Options every state-changing dlq command takes. */
export const ACTION_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  by: {
    type: 'string',
    valueName: 'operator',
    required: true,
    description: 'Who you are (ann, or operator:ann); recorded in the case and the audit log.',
  },
  note: {
    type: 'string',
    valueName: 'text',
    required: true,
    description: 'Why; kept in the case history and the audit record.',
  },
  prefix: {
    type: 'string',
    valueName: 'prefix',
    description: 'Topic prefix of the deployment.',
    defaultText: '$TOOLGATE_TOPIC_PREFIX, else toolgate',
  },
  catalog: {
    type: 'string',
    valueName: 'module',
    description: 'Catalog module the executors run (to check and redact results, and audit fields).',
    defaultText: '$TOOLGATE_CATALOG_MODULE, else the store catalog',
  },
};

/** What every state-changing dlq command opens: everything a resolution delivers to (see `openOperations`). */
export const ACTION_NEEDS: readonly Dependency[] = ['postgres', 'kafka', 'schema-registry', 'redis'];

/** `--by` and `--note`, checked as the case model will check them, so a mistake costs no connection. */
export function actor(args: Args): { by: string; note: string } {
  const by = args.string('by')!.trim();
  const note = args.string('note')!;
  if (by === '' || by === 'operator:' || /\s/.test(by)) {
    throw new UsageError(
      '--by must name you without spaces, e.g. --by ann or --by operator:ann.',
      args.command,
    );
  }
  if (note.trim() === '') throw new UsageError('--note must say why.', args.command);
  if (note.length > MAX_NOTE_LENGTH) {
    throw new UsageError(`--note is ${note.length} characters; at most ${MAX_NOTE_LENGTH}.`, args.command);
  }
  return { by, note };
}

/**
 * The text of the inline flag `--<inline>`, or of the file `--<inline>-file` names (relative to the
 * command's working directory), e.g. --result / --result-file; a usage error when both are given or
 * the file cannot be read.
 */
export function inlineOrFile(
  { args, io }: Pick<CommandContext, 'args' | 'io'>,
  inline: string,
): string | undefined {
  const file = `${inline}-file`;
  const cwd = io.cwd ?? process.cwd();
  const text = args.string(inline);
  const path = args.string(file);
  if (text !== undefined && path !== undefined) {
    throw new UsageError(`give --${inline} or --${file}, not both.`, args.command);
  }
  if (path === undefined) return text;
  try {
    return readFileSync(resolve(cwd, path), 'utf8');
  } catch (err) {
    throw new UsageError(
      `--${file}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'}).`,
      args.command,
    );
  }
}

/**
 * Turns a refused operation into the error the CLI reports: a wrong input from the operator (a
 * result that does not fit the tool, a missing principal assertion) is a usage error (2); a case
 * that is missing, moved meanwhile, or cannot make this move is an operational failure (1).
 */
export function refusal(
  result: Extract<OperationResult, { ok: false }>,
  caseId: string,
  verb: string,
  command: string,
): Error {
  const message = `cannot ${verb} case ${caseId}: ${result.detail} (${result.reason}).`;
  switch (result.reason) {
    case 'invalid-result':
    case 'needs-assertion':
      return new UsageError(message, command);
    case 'not-found':
      return new FailureError(message, "List cases with 'toolgate dlq list'.");
    case 'state-changed':
      return new FailureError(message, `Look again with 'toolgate dlq show ${caseId}'.`);
    default:
      return new FailureError(message, `See what the case allows with 'toolgate dlq show ${caseId}'.`);
  }
}

/** One state-changing operation on a case, as {@link runCaseAction} runs it. */
export interface CaseAction {
  /** In the refusal, e.g. "redrive" (`cannot redrive case …`). */
  readonly verb: string;
  /** Heads the summary, e.g. "Redriven". */
  readonly done: string;
  run(ops: Operations): Promise<OperationResult>;
}

/**
 * Runs `action` on case `caseId` with the write operations ({@link openOperations}) and reports
 * it: a refusal is thrown as the CLI's error ({@link refusal}); otherwise the answer is printed (the
 * JSON document, or its summary) and the exit code is 0 when every delivery completed, else 1.
 */
export async function runCaseAction(
  { args, out, config, resources, io }: CommandContext,
  caseId: string,
  action: CaseAction,
): Promise<number> {
  const ops = await openOperations({ args, config, resources, out, given: io.operations }, 'write');
  const answer = await action.run(ops);
  if (!answer.ok) throw refusal(answer, caseId, action.verb, args.command);
  out.json(answer);
  out.text(operationSummary(answer, action.done));
  return answer.delivery.complete ? EXIT.ok : EXIT.failure;
}
