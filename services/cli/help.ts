import { CONNECTION_OPTIONS, GLOBAL_OPTIONS, INLINE_CHOICES, valueLabel } from './args.js';
import { commandName, type CommandGroup, type CommandSpec, type OptionSpec } from './command.js';
import { EXIT } from './cli-error.js';

const EXIT_CODES = `Exit codes:
  ${EXIT.ok}  ok
  ${EXIT.failure}  operational failure (e.g. verify found a broken link, a case could not be moved)
  ${EXIT.usage}  usage error (unknown command, missing or bad flag, bad configuration)
  ${EXIT.unreachable}  a server the command needs could not be reached
`;

/** `toolgate --help`: every group and command, the environment, the exit codes. */
export function topHelp(groups: readonly CommandGroup[]): string {
  const rows = groups.flatMap((g) => g.commands.map((c) => [commandName(c), c.summary] as const));
  return `toolgate — operate toolgate: dead letters, the audit log, the tool registry, schemas, topics, keys.

Usage: toolgate <group> <command> [arguments] [options]
       toolgate <group> <command> --help

Commands:
${twoColumns(rows)}
Every command takes --json (one JSON document on stdout) and -h/--help. Tables fit the width of
the terminal (COLUMNS, else the terminal's, else 100), cutting long text with '…' and keeping ids
whole; their layout may change, so scripts should read --json, not the tables.

Environment (a flag overrides each):
  DATABASE_URL           PostgreSQL (audit, dlq, registry export)          --database-url
  KAFKA_BROKERS          Kafka bootstrap brokers (topics)                  --brokers
  SCHEMA_REGISTRY_URL    Confluent-compatible registry (schemas --registry) --schema-registry-url
  REDIS_URL              Redis                                             --redis-url
  TOOLGATE_TOPIC_PREFIX  topic name prefix (default toolgate)              --prefix
Only the servers a command needs are contacted.

${EXIT_CODES}`;
}

/** `toolgate <group> --help`: the group's commands. */
export function groupHelp(group: CommandGroup): string {
  const rows = group.commands.map((c) => [c.path[1], c.summary] as const);
  return `toolgate ${group.name} — ${group.summary}

Usage: toolgate ${group.name} <command> [arguments] [options]

Commands:
${twoColumns(rows)}
Run 'toolgate ${group.name} <command> --help' for a command's arguments and options.
`;
}

/** `toolgate <group> <command> --help`: arguments, options (own, connection, global), examples. */
export function commandHelp(spec: CommandSpec): string {
  const name = commandName(spec);
  const head = `Usage: toolgate ${name} `;
  const usage = [
    ...spec.positionals.map((p) => `<${p.name}>`),
    ...Object.entries(spec.options)
      .filter(([, o]) => o.required)
      .map(([flag, o]) => optionLabel(flag, o)),
    '[options]',
  ];
  // Keeps "--flag <value>" together when the usage line wraps.
  const usageText = wrap(usage.map((u) => u.replace(/ /g, '\u00a0')).join(' '), PAGE_WIDTH - head.length)
    .replace(/\u00a0/g, ' ')
    .split('\n')
    .join(`\n${' '.repeat(head.length)}`);
  const sections = [`toolgate ${name} — ${spec.summary}`, `${head}${usageText}`];
  if (spec.details !== undefined && spec.details.length > 0)
    sections.push(spec.details.map((d) => wrap(d, PAGE_WIDTH)).join('\n\n'));
  if (spec.positionals.length > 0) {
    sections.push(
      `Arguments:\n${twoColumns(spec.positionals.map((p) => [`<${p.name}>`, p.description]))}`.trimEnd(),
    );
  }
  const own = Object.entries(spec.options);
  if (own.length > 0) sections.push(`Options:\n${optionRows(own)}`.trimEnd());
  const connection = spec.needs.map((d) => CONNECTION_OPTIONS[d]);
  if (connection.length > 0) sections.push(`Connection:\n${optionRows(connection)}`.trimEnd());
  sections.push(`Global:\n${optionRows(Object.entries(GLOBAL_OPTIONS))}`.trimEnd());
  if (spec.examples.length > 0) sections.push(`Examples:\n${spec.examples.map((e) => `  ${e}`).join('\n')}`);
  sections.push(EXIT_CODES.trimEnd());
  return `${sections.join('\n\n')}\n`;
}

function optionLabel(flag: string, o: OptionSpec): string {
  return `--${flag}${o.type === 'string' ? ` <${valueLabel(o)}>` : ''}`;
}

function optionDescription(o: OptionSpec): string {
  const choices = o.choices?.join('|');
  return choices !== undefined && choices.length > INLINE_CHOICES
    ? `${o.description} One of: ${o.choices!.join(', ')}.`
    : o.description;
}

function optionRows(entries: readonly (readonly [string, OptionSpec])[]): string {
  return twoColumns(
    entries.map(([flag, o]) => {
      const label = `${o.short === undefined ? '' : `-${o.short}, `}${optionLabel(flag, o)}`;
      const extra = [
        o.required ? 'required' : '',
        o.defaultText === undefined ? '' : `default: ${o.defaultText}`,
      ]
        .filter(Boolean)
        .join('; ');
      const text = optionDescription(o);
      return [label, extra ? `${text} (${extra})` : text];
    }),
  );
}

/** Lines are wrapped to this width where the text allows it. */
const PAGE_WIDTH = 100;

/** `  left  right` rows, the right column wrapped with a hanging indent. */
function twoColumns(rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...rows.map(([a]) => a.length));
  const indent = ' '.repeat(width + 4);
  return rows
    .map(
      ([a, b]) =>
        `  ${a.padEnd(width)}  ${wrap(b, Math.max(40, PAGE_WIDTH - indent.length))
          .split('\n')
          .join(`\n${indent}`)}\n`,
    )
    .join('');
}

/** Words of `text` in lines of at most `width` characters (a longer word gets its own line). */
export function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines.join('\n');
}
