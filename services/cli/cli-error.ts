/**
 * The process exit codes of the `toolgate` CLI. Scripts branch on them, so they never change meaning:
 * - 0 `ok`: the command did what was asked (a verify found every link intact).
 * - 1 `failure`: it ran, and the answer is bad or the action was refused (a broken audit link, a
 *   case that moved meanwhile, a topic with another partition count, an incompatible schema).
 * - 2 `usage`: the command line or configuration is wrong (unknown command, missing flag, bad value);
 *   nothing was contacted.
 * - 3 `unreachable`: a server the command needs (Postgres, Kafka, the schema registry, Redis) could
 *   not be reached or refused the connection; retrying later may succeed.
 */
export const EXIT = { ok: 0, failure: 1, usage: 2, unreachable: 3 } as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** What kind of error ended a command; shown in `--json` error output beside the exit code. */
export type CliErrorKind = 'failure' | 'usage' | 'unreachable';

/**
 * An error the CLI reports as one line (plus an optional hint) and a fixed exit code. Anything else
 * thrown by a command is classified by `exitCodeOf` (cli/classify-error.ts).
 */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  constructor(
    readonly kind: CliErrorKind,
    message: string,
    /** A second line telling the operator what to do about it. */
    readonly hint?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  get exitCode(): ExitCode {
    return EXIT[this.kind];
  }
}

/**
 * The command line is wrong. `command` names the command whose help the hint points to (e.g.
 * `audit who`), or is empty for the top level.
 */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    readonly command: string,
    hint?: string,
  ) {
    super('usage', message, hint ?? `Run 'toolgate ${command ? `${command} ` : ''}--help' for usage.`);
  }
}

/** A dependency could not be reached; `dependency` names it (postgres, kafka, schema-registry, redis). */
export class UnreachableError extends CliError {
  override readonly name = 'UnreachableError';
  constructor(
    readonly dependency: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super('unreachable', message, `Check that ${dependency} is up and the address is right.`, options);
  }
}

/** The command ran and the outcome is a failure (exit 1). */
export class FailureError extends CliError {
  override readonly name = 'FailureError';
  constructor(message: string, hint?: string, options?: ErrorOptions) {
    super('failure', message, hint, options);
  }
}
