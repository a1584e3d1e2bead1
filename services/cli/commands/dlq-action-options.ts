import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { MAX_NOTE_LENGTH } from '../../../libs/reconcile/case-model.js';
import type { OperationResult } from '../../../libs/reconcile/operations.js';
import type { Args } from '../args.js';
import { FailureError, UsageError } from '../cli-error.js';
import type { OptionSpec } from '../command.js';

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

/** The text of an inline value or a file (relative to `cwd`), for flags such as --result / --result-file. */
export function inlineOrFile(args: Args, inline: string, file: string, cwd: string): string | undefined {
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
