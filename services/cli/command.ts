import type { Args } from './args.js';
import type { CliConfig } from './config.js';
import type { CliIo } from './io.js';
import type { Output } from './output.js';
import type { Resources } from './resources.js';

/** A server a command talks to; each adds its connection flag (e.g. `--database-url`). */
export type Dependency = 'postgres' | 'kafka' | 'schema-registry' | 'redis';

/** One `--flag` of a command. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** One line for the help text. */
  readonly description: string;
  /** Shown in the help as `--flag <valueName>`. Default 'value'. */
  readonly valueName?: string;
  /** Usage error (exit 2) naming the flag when absent. */
  readonly required?: boolean;
  /** The only values accepted; a wrong one is a usage error with a suggestion. */
  readonly choices?: readonly string[];
  /** Shown in the help as `(default: …)`; the command applies it. */
  readonly defaultText?: string;
}

/** One `<positional>` argument. */
export interface PositionalSpec {
  readonly name: string;
  readonly description: string;
}

/** What a command's `run` gets: parsed arguments, output, configuration and lazily opened servers. */
export interface CommandContext {
  readonly args: Args;
  readonly out: Output;
  readonly config: CliConfig;
  readonly resources: Resources;
  readonly io: CliIo;
}

/**
 * A leaf command such as `audit who`. `run` resolves with the exit code (0 or 1) and throws a
 * CliError for anything else; it must write its result through `ctx.out` only.
 */
export interface CommandSpec {
  /** Group and name, e.g. ['audit', 'who']. */
  readonly path: readonly [group: string, name: string];
  /** One line for the command list. */
  readonly summary: string;
  /** Paragraphs for the command's own help, after the summary. */
  readonly details?: readonly string[];
  /** Required positionals, in order; no command takes optional ones. */
  readonly positionals: readonly PositionalSpec[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Servers it talks to (each adds its connection flag); the only ones it opens. */
  readonly needs: readonly Dependency[];
  readonly examples: readonly string[];
  run(ctx: CommandContext): Promise<number>;
}

/** A group of commands such as `audit`. */
export interface CommandGroup {
  readonly name: string;
  readonly summary: string;
  readonly commands: readonly CommandSpec[];
}

/** The full name of a command, e.g. `audit who`. */
export function commandName(spec: CommandSpec): string {
  return spec.path.join(' ');
}
