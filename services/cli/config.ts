import { z } from 'zod';
import { UsageError } from './cli-error.js';

const positiveInt = z.coerce.number().int().positive().max(100_000);

/**
 * The environment variables the CLI reads, each parsed only when a command needs it, so a bad
 * REDIS_URL does not stop `audit who`. Names and formats match the services' config.ts files, so an
 * operator can source the same environment.
 */
const SETTINGS = {
  DATABASE_URL: z
    .string()
    .trim()
    .regex(/^postgres(ql)?:\/\//, 'expected postgres://…'),
  KAFKA_BROKERS: z
    .string()
    .trim()
    .min(1)
    .transform((v, ctx) => {
      const brokers = v
        .split(',')
        .map((b) => b.trim())
        .filter(Boolean);
      if (
        brokers.length === 0 ||
        brokers.some((b) => !/^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]]+):\d{1,5}$/.test(b))
      ) {
        ctx.addIssue({ code: 'custom', message: 'expected host:port[,host:port...]' });
        return z.NEVER;
      }
      return brokers;
    }),
  SCHEMA_REGISTRY_URL: z
    .string()
    .trim()
    .regex(/^https?:\/\/[^\s]+$/, 'expected http(s)://…')
    .transform((v) => v.replace(/\/+$/, '')),
  REDIS_URL: z
    .string()
    .trim()
    .regex(/^(rediss?|redis-cluster):\/\//, 'expected redis://…, rediss://… or redis-cluster://host:port,…'),
  TOOLGATE_TOPIC_PREFIX: z.string().regex(/^[a-zA-Z0-9._-]{1,200}$/, 'use 1-200 of [a-zA-Z0-9._-]'),
  TOOLGATE_CATALOG_MODULE: z.string().trim().min(1),
  /** The executors' Redis key prefix, where `dlq resolve` settles idempotency records. */
  REDIS_KEY_PREFIX: z.string(),
  /** How long a settled idempotency record is kept (the executor's result TTL). */
  RESULT_TTL_MS: z.coerce.number().int().positive(),
  CALLS_PARTITIONS: positiveInt,
  RESULTS_PARTITIONS: positiveInt,
  AUDIT_PARTITIONS: positiveInt,
  DLQ_PARTITIONS: positiveInt,
  /** The terminal's width, as shells set it; the CLI's tables fit it (io.ts outputWidth). */
  COLUMNS: positiveInt,
} as const;

/** A variable the CLI may read. */
export type SettingName = keyof typeof SETTINGS;
/** The parsed type of a variable. */
export type SettingValue<N extends SettingName> = z.output<(typeof SETTINGS)[N]>;

/** A command-line flag that overrides a variable: its name (without `--`) and raw value if given. */
export interface FlagOverride {
  readonly flag: string;
  readonly value: string | undefined;
}

/**
 * The CLI's configuration: the environment, captured once, parsed per variable on first use. A
 * flag given on the command line wins over the variable and is checked by the same schema.
 */
export class CliConfig {
  private readonly env: Readonly<Record<string, string | undefined>>;

  constructor(env: Readonly<Record<string, string | undefined>>) {
    this.env = Object.fromEntries(Object.keys(SETTINGS).map((k) => [k, env[k]]));
  }

  /**
   * The setting from `override` (when given), else from the environment, else undefined. Throws
   * UsageError (exit 2) naming the flag or the variable when the value does not parse; the value
   * itself is never echoed (a URL may carry a password).
   */
  get<N extends SettingName>(name: N, command: string, override?: FlagOverride): SettingValue<N> | undefined {
    const schema = SETTINGS[name] as unknown as z.ZodType<SettingValue<N>>;
    if (override?.value !== undefined) {
      const parsed = schema.safeParse(override.value);
      if (!parsed.success)
        throw new UsageError(`--${override.flag}: ${firstMessage(parsed.error)}.`, command);
      return parsed.data;
    }
    const raw = this.env[name];
    if (raw === undefined || raw.trim() === '') return undefined;
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      throw new UsageError(
        `${name} in the environment is invalid: ${firstMessage(parsed.error)}.`,
        command,
        `Fix ${name}${override === undefined ? '' : `, or pass --${override.flag}`}.`,
      );
    }
    return parsed.data;
  }

  /** Like {@link get}, but a missing setting is a UsageError telling how to give it. */
  require<N extends SettingName>(name: N, command: string, override?: FlagOverride): SettingValue<N> {
    const value = this.get(name, command, override);
    if (value === undefined) {
      throw new UsageError(
        `'${command}' needs ${name}: set it in the environment${override === undefined ? '' : ` or pass --${override.flag}`}.`,
        command,
      );
    }
    return value;
  }
}

/** The configuration from `env`; by default the process environment (the only place the CLI reads it). */
export function loadCliConfig(env: Readonly<Record<string, string | undefined>> = process.env): CliConfig {
  return new CliConfig(env);
}

function firstMessage(error: z.ZodError): string {
  return error.issues[0]?.message ?? 'invalid value';
}

/** `scheme://user:***@host/…`: a URL fit for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]*)@/i, (_, scheme: string, auth: string) =>
    auth.includes(':') ? `${scheme}${auth.slice(0, auth.indexOf(':'))}:***@` : `${scheme}${auth}@`,
  );
}
