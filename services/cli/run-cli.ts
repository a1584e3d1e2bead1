import { didYouMean, suggestNames } from '../../libs/registry/did-you-mean.js';
import { parseCommandArgs, wantsHelp } from './args.js';
import { EXIT, UsageError, type CliError } from './cli-error.js';
import { toCliError } from './classify-error.js';
import { commandName, type CommandGroup, type CommandSpec } from './command.js';
import { COMMAND_GROUPS } from './commands/index.js';
import { loadCliConfig } from './config.js';
import { commandHelp, groupHelp, topHelp } from './help.js';
import { outputWidth, type CliIo } from './io.js';
import { Output } from './output.js';
import { Resources } from './resources.js';
import { withOutputWidth } from './table.js';

/**
 * Runs one `toolgate` command line (`argv` without the node and script paths) and resolves with its
 * exit code (see cli-error.ts EXIT); never rejects and never exits the process. Help goes to stdout
 * with exit 0; every error goes to stderr (one JSON object with `--json`). Connections the command
 * opened are closed before it resolves.
 */
export async function runCli(argv: readonly string[], io: CliIo, groups = COMMAND_GROUPS): Promise<number> {
  const json = jsonRequested(argv);
  const out = new Output(io, json);
  let command = '';
  try {
    const target = route(argv, groups);
    if ('help' in target) {
      io.stdout.write(target.help);
      return EXIT.ok;
    }
    const { spec, rest } = target;
    command = commandName(spec);
    if (wantsHelp(rest)) {
      io.stdout.write(commandHelp(spec));
      return EXIT.ok;
    }
    const args = parseCommandArgs(spec, rest);
    const config = loadCliConfig(io.env);
    const resources = new Resources(config, args, io);
    try {
      // Tables a command formats fit the terminal (table.ts); --json output is not affected.
      return await withOutputWidth(outputWidth(io.stdout, config), () =>
        spec.run({ args, out, config, resources, io }),
      );
    } finally {
      await resources.close();
    }
  } catch (err) {
    const error: CliError = toCliError(err, command);
    out.error(error);
    return error.exitCode;
  }
}

type Route = { readonly help: string } | { readonly spec: CommandSpec; readonly rest: readonly string[] };

/** Finds the command (or the help page) `argv` names; throws UsageError with a suggestion. */
function route(argv: readonly string[], groups: readonly CommandGroup[]): Route {
  const [first, second, ...rest] = argv;
  if (first === undefined || first === '--json')
    throw new UsageError('no command given.', '', topHint(groups));
  if (first === '--help' || first === '-h') return { help: topHelp(groups) };
  if (first === 'help') return helpRoute(argv.slice(1), groups);
  const group = findGroup(first, groups);
  if (second === undefined || second.startsWith('-')) {
    if (second === '--help' || second === '-h') return { help: groupHelp(group) };
    throw new UsageError(
      `'${group.name}' needs a command: ${group.commands.map((c) => c.path[1]).join(', ')}.`,
      group.name,
    );
  }
  return { spec: findCommand(group, second), rest };
}

/** `toolgate help [group [command]]`. */
function helpRoute(names: readonly string[], groups: readonly CommandGroup[]): Route {
  const [g, c] = names;
  if (g === undefined) return { help: topHelp(groups) };
  const group = findGroup(g, groups);
  return c === undefined ? { help: groupHelp(group) } : { help: commandHelp(findCommand(group, c)) };
}

function findGroup(name: string, groups: readonly CommandGroup[]): CommandGroup {
  const group = groups.find((g) => g.name === name);
  if (group !== undefined) return group;
  // "toolgate who O-1" most likely meant "toolgate audit who O-1": suggest full command names too.
  const full = groups.flatMap((g) => g.commands.filter((c) => c.path[1] === name).map(commandName));
  const suggestions =
    full.length > 0
      ? full
      : suggestNames(
          name,
          groups.map((g) => g.name),
        );
  const hint = didYouMean(suggestions);
  throw new UsageError(`unknown command '${name}'.${hint ? ` ${hint}` : ''}`, '', topHint(groups));
}

function findCommand(group: CommandGroup, name: string): CommandSpec {
  const spec = group.commands.find((c) => c.path[1] === name);
  if (spec !== undefined) return spec;
  const hint = didYouMean(
    suggestNames(
      name,
      group.commands.map((c) => c.path[1]),
    ).map((n) => `${group.name} ${n}`),
  );
  throw new UsageError(
    `unknown command '${group.name} ${name}'.${hint ? ` ${hint}` : ''} Commands: ${group.commands.map((c) => c.path[1]).join(', ')}.`,
    group.name,
  );
}

function topHint(groups: readonly CommandGroup[]): string {
  return `Commands: ${groups.flatMap((g) => g.commands.map(commandName)).join(', ')}. Run 'toolgate --help' for usage.`;
}

/** Whether `--json` appears before `--`, so even a usage error is reported as JSON. */
function jsonRequested(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}
