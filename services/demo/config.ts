import { z } from 'zod';

/**
 * What `npm run demo` was asked to do: run the story (the default), print the help, or remove
 * what one earlier kafka-mode run created on the servers.
 */
export type DemoAction =
  | { readonly kind: 'run' }
  | { readonly kind: 'help' }
  | { readonly kind: 'clean-up'; readonly runId: string };

/** How the demo runs, parsed once from the command line and the environment. */
export interface DemoConfig {
  readonly action: DemoAction;
  readonly mode: 'embedded' | 'kafka';
  /** Only used in kafka mode. */
  readonly servers: {
    readonly kafkaBrokers: readonly string[];
    readonly schemaRegistryUrl: string;
    readonly redisUrl: string;
    readonly databaseUrl: string;
  };
  /** Print the topology's warnings and errors to stderr. */
  readonly verbose: boolean;
}

const EnvSchema = z.object({
  TOOLGATE_DEMO_MODE: z.enum(['embedded', 'kafka']).optional(),
  /** Defaults are where `npm run servers:up` and the local Postgres/Redis listen. */
  KAFKA_BROKERS: z.string().trim().min(1).default('127.0.0.1:19092'),
  SCHEMA_REGISTRY_URL: z.url().default('http://127.0.0.1:18081/apis/ccompat/v7'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'expected redis://… or rediss://…')
    .default('redis://127.0.0.1:6379'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'expected postgres://…')
    .default('postgres://postgres@127.0.0.1:5432/test'),
});

/** Thrown for an unusable setting; the message says which and why. */
export class DemoConfigError extends Error {
  override readonly name = 'DemoConfigError';
}

/**
 * Reads the command line (see help.ts: `--kafka`, `--embedded`, `--verbose`, `--help`/`-h`,
 * `--clean-up <run-id>`) and the variables above from `env` (TOOLGATE_DEMO_MODE=kafka equals
 * `--kafka`; a flag wins over the variable). `--help` wins over everything else, so it works
 * next to any other flag. Throws {@link DemoConfigError} on an unknown flag, a missing or malformed
 * run id, or a malformed variable.
 */
export function loadDemoConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const help = argv.includes('--help') || argv.includes('-h');
  // The help needs no settings: a malformed variable must not hide it.
  const parsed = EnvSchema.safeParse(help ? {} : env);
  if (!parsed.success) throw new DemoConfigError(`Invalid demo settings:\n${z.prettifyError(parsed.error)}`);
  let mode = parsed.data.TOOLGATE_DEMO_MODE ?? 'embedded';
  let verbose = false;
  let cleanUp: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--kafka') mode = 'kafka';
    else if (arg === '--embedded') mode = 'embedded';
    else if (arg === '--verbose') verbose = true;
    else if (arg === '--help' || arg === '-h') continue;
    else if (arg === '--clean-up' || arg.startsWith('--clean-up=')) {
      cleanUp = arg === '--clean-up' ? argv[++i] : arg.slice('--clean-up='.length);
      cleanUp = checkedRunId(cleanUp);
    } else if (!help) {
      throw new DemoConfigError(`Unknown option ${arg}. Run 'npm run demo -- --help' for the options.`);
    }
  }
  const action: DemoAction = help
    ? { kind: 'help' }
    : cleanUp === undefined
      ? { kind: 'run' }
      : { kind: 'clean-up', runId: cleanUp };
  return {
    action,
    mode: action.kind === 'clean-up' ? 'kafka' : mode,
    verbose,
    servers: {
      kafkaBrokers: parsed.data.KAFKA_BROKERS.split(',').map((b) => b.trim()),
      schemaRegistryUrl: parsed.data.SCHEMA_REGISTRY_URL,
      redisUrl: parsed.data.REDIS_URL,
      databaseUrl: parsed.data.DATABASE_URL,
    },
  };
}

/**
 * The name of a kafka-mode run: `demo_` then lowercase letters, digits and `_`. It is the run's
 * topic prefix (`<id>.`), Redis key prefix (`<id>:`), consumer group prefix (`<id>-`) and Postgres
 * schema, so it must be valid in all of them; the `demo_` start keeps a clean-up from ever
 * naming a schema such as `public`.
 */
export const DEMO_RUN_ID = /^demo_[a-z0-9_]{1,50}$/;

function checkedRunId(value: string | undefined): string {
  if (value === undefined || value.startsWith('-')) {
    throw new DemoConfigError(
      "--clean-up needs the run's id, e.g. --clean-up demo_1a2b3c4d (a --kafka run prints it).",
    );
  }
  if (!DEMO_RUN_ID.test(value)) {
    throw new DemoConfigError(
      `--clean-up ${value}: not a demo run id; expected demo_ followed by lowercase letters, digits or _ (a --kafka run prints its id).`,
    );
  }
  return value;
}
