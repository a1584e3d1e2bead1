import { parseArgs } from 'node:util';
import { didYouMean, suggestNames } from '../../libs/registry/did-you-mean.js';
import { UsageError } from './cli-error.js';
import { commandName, type CommandSpec, type Dependency, type OptionSpec } from './command.js';

/** Flags every command takes. */
export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  json: { type: 'boolean', description: 'Print one JSON document to stdout instead of text (for scripts).' },
  help: { type: 'boolean', short: 'h', description: 'Show this help and exit.' },
};

/** The flag that overrides each dependency's address from the environment. */
export const CONNECTION_OPTIONS: Readonly<Record<Dependency, readonly [string, OptionSpec]>> = {
  postgres: [
    'database-url',
    { type: 'string', valueName: 'url', description: 'PostgreSQL URL.', defaultText: '$DATABASE_URL' },
  ],
  kafka: [
    'brokers',
    {
      type: 'string',
      valueName: 'host:port,…',
      description: 'Kafka bootstrap brokers.',
      defaultText: '$KAFKA_BROKERS',
    },
  ],
  'schema-registry': [
    'schema-registry-url',
    {
      type: 'string',
      valueName: 'url',
      description: 'Confluent-compatible schema registry base URL.',
      defaultText: '$SCHEMA_REGISTRY_URL',
    },
  ],
  redis: [
    'redis-url',
    { type: 'string', valueName: 'url', description: 'Redis URL.', defaultText: '$REDIS_URL' },
  ],
};

/** Choices are spelled out in a flag's value label when they are this short, else named by valueName. */
export const INLINE_CHOICES = 24;

/** What help and errors show as a string flag's value: `a|b` for short choice lists, else its name. */
export function valueLabel(o: OptionSpec): string {
  const choices = o.choices?.join('|');
  return choices !== undefined && choices.length <= INLINE_CHOICES ? choices : (o.valueName ?? 'value');
}

/** Every flag `spec` accepts: its own, its dependencies' connection flags, then the global ones. */
export function allOptions(spec: CommandSpec): Readonly<Record<string, OptionSpec>> {
  return {
    ...spec.options,
    ...Object.fromEntries(spec.needs.map((d) => CONNECTION_OPTIONS[d])),
    ...GLOBAL_OPTIONS,
  };
}

/**
 * Whether the raw arguments ask for help (`-h` / `--help` before any `--`), checked before parsing
 * so help works even on an otherwise wrong command line.
 */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/**
 * Parses a command's arguments (node:util parseArgs, with our own checks so every mistake names the
 * flag and suggests the nearest one). Throws {@link UsageError} for: an unknown flag, a value given
 * to a boolean flag, a string flag without a value (or whose "value" is the next `--flag`), a flag
 * given twice, a value outside `choices`, a missing required flag, a missing or extra positional.
 */
export function parseCommandArgs(spec: CommandSpec, argv: readonly string[]): Args {
  const name = commandName(spec);
  const options = allOptions(spec);
  const config = Object.fromEntries(
    Object.entries(options).map(([flag, o]) => [
      flag,
      o.short === undefined ? { type: o.type } : { type: o.type, short: o.short },
    ]),
  );
  const { tokens } = parseArgs({
    args: [...argv],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values = new Map<string, string | boolean>();
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') {
      positionals.push(token.value);
      continue;
    }
    if (token.kind !== 'option') continue;
    const option = options[token.name];
    if (option === undefined) {
      const known = Object.keys(options).map((f) => `--${f}`);
      const hint = didYouMean(
        suggestNames(token.rawName.startsWith('--') ? token.rawName : `--${token.name}`, known),
      );
      throw new UsageError(`unknown option ${token.rawName} for '${name}'.${hint ? ` ${hint}` : ''}`, name);
    }
    if (values.has(token.name)) throw new UsageError(`--${token.name} is given more than once.`, name);
    if (option.type === 'boolean') {
      if (token.value !== undefined) throw new UsageError(`--${token.name} takes no value.`, name);
      values.set(token.name, true);
      continue;
    }
    const value = token.value;
    if (value === undefined || (!token.inlineValue && value.startsWith('--'))) {
      throw new UsageError(
        `--${token.name} needs a value: --${token.name} <${valueLabel(option)}>` +
          (value === undefined ? '.' : ` (write --${token.name}=${value} if '${value}' is the value).`),
        name,
      );
    }
    if (option.choices !== undefined && !option.choices.includes(value)) {
      const hint = didYouMean(suggestNames(value, option.choices));
      throw new UsageError(
        `--${token.name} must be one of ${option.choices.join(', ')} (got '${value}').${hint ? ` ${hint}` : ''}`,
        name,
      );
    }
    values.set(token.name, value);
  }
  for (const [flag, option] of Object.entries(options)) {
    if (option.required && !values.has(flag)) {
      throw new UsageError(`missing required option --${flag} <${valueLabel(option)}>.`, name);
    }
  }
  if (positionals.length < spec.positionals.length) {
    const missing = spec.positionals[positionals.length]!;
    throw new UsageError(`missing <${missing.name}>: ${missing.description}`, name);
  }
  if (positionals.length > spec.positionals.length) {
    throw new UsageError(
      `unexpected argument '${positionals[spec.positionals.length]}': '${name}' takes ` +
        (spec.positionals.length === 0
          ? 'no arguments.'
          : spec.positionals.map((p) => `<${p.name}>`).join(' ') + '.'),
      name,
    );
  }
  return new Args(name, values, positionals);
}

/** Parsed arguments with typed, validating getters; each getter throws UsageError naming the flag. */
export class Args {
  constructor(
    /** The command's full name, for error messages. */
    readonly command: string,
    private readonly values: ReadonlyMap<string, string | boolean>,
    readonly positionals: readonly string[],
  ) {}

  /** The value of a string flag, or undefined when absent. */
  string(flag: string): string | undefined {
    const v = this.values.get(flag);
    return typeof v === 'string' ? v : undefined;
  }

  /** Whether a boolean flag was given. */
  flag(flag: string): boolean {
    return this.values.get(flag) === true;
  }

  /** Whether the flag was given at all. */
  has(flag: string): boolean {
    return this.values.has(flag);
  }

  /** The i-th positional (required positionals are checked at parse time). */
  positional(i: number): string {
    return this.positionals[i]!;
  }

  /** An integer flag within [min, max], or `fallback` when absent. */
  int(flag: string, range: { min: number; max: number }, fallback?: number): number | undefined {
    const raw = this.string(flag);
    if (raw === undefined) return fallback;
    const n = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
    if (!Number.isSafeInteger(n) || n < range.min || n > range.max) {
      throw new UsageError(
        `--${flag} must be a whole number from ${range.min} to ${range.max} (got '${raw}').`,
        this.command,
      );
    }
    return n;
  }

  /**
   * A time flag as epoch ms: an ISO 8601 date or date-time (`2025-03-01`, `2025-03-01T10:00:00Z`;
   * without a zone it is UTC), or epoch milliseconds. Undefined when absent.
   */
  time(flag: string): number | undefined {
    const raw = this.string(flag);
    if (raw === undefined) return undefined;
    const ms = parseTime(raw);
    if (ms === undefined) {
      throw new UsageError(
        `--${flag} must be an ISO 8601 time such as 2025-03-01T10:00:00Z, a date, or epoch ms (got '${raw}').`,
        this.command,
      );
    }
    return ms;
  }
}

const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** Epoch ms of an ISO 8601 date/date-time (UTC unless it names a zone) or of epoch-ms digits. */
export function parseTime(raw: string): number | undefined {
  const text = raw.trim();
  if (/^\d{1,16}$/.test(text)) return Number(text);
  const m = ISO.exec(text);
  if (m === null) return undefined;
  const zoned = m[1] !== undefined || !text.includes(':') ? text : `${text}Z`;
  const ms = Date.parse(zoned.replace(' ', 'T'));
  return Number.isFinite(ms) ? ms : undefined;
}
