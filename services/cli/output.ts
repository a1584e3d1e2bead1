import type { CliError } from './cli-error.js';
import type { CliIo } from './io.js';
import { printable } from './table.js';

/**
 * A command's output. In text mode commands write tables and lines; in `--json` mode a command writes
 * exactly one JSON document to stdout (via {@link Output.json}), so `toolgate … --json | jq` always
 * parses, and progress and warnings go to stderr in both modes.
 */
export class Output {
  constructor(
    private readonly io: CliIo,
    readonly jsonMode: boolean,
  ) {}

  /** Text for people; dropped in JSON mode (the command's JSON document carries the same facts). */
  text(text: string): void {
    if (!this.jsonMode) this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** The JSON document; written only in JSON mode. */
  json(value: unknown): void {
    if (this.jsonMode) this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** Progress and warnings, to stderr in both modes. */
  note(text: string): void {
    this.io.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Reports an error on stderr: two lines of text, or one JSON object in JSON mode. */
  error(err: CliError): void {
    if (this.jsonMode) {
      const body = {
        error: { kind: err.kind, exitCode: err.exitCode, message: err.message, hint: err.hint ?? null },
      };
      this.io.stderr.write(`${JSON.stringify(body)}\n`);
      return;
    }
    this.io.stderr.write(
      `toolgate: ${printable(err.message)}\n${err.hint === undefined ? '' : `${printable(err.hint)}\n`}`,
    );
  }
}
