import { z } from 'zod';

/** How the demo runs, parsed once from the command line and the environment. */
export interface DemoConfig {
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
 * Reads `--kafka` / `--embedded` / `--verbose` from `argv` and the variables above from `env`
 * (TOOLGATE_DEMO_MODE=kafka equals `--kafka`; a flag wins over the variable). Throws
 * {@link DemoConfigError} on an unknown flag or a malformed variable.
 */
export function loadDemoConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) throw new DemoConfigError(`Invalid demo settings:\n${z.prettifyError(parsed.error)}`);
  let mode = parsed.data.TOOLGATE_DEMO_MODE ?? 'embedded';
  let verbose = false;
  for (const arg of argv) {
    if (arg === '--kafka') mode = 'kafka';
    else if (arg === '--embedded') mode = 'embedded';
    else if (arg === '--verbose') verbose = true;
    else throw new DemoConfigError(`Unknown option ${arg}. Use --kafka, --embedded or --verbose.`);
  }
  return {
    mode,
    verbose,
    servers: {
      kafkaBrokers: parsed.data.KAFKA_BROKERS.split(',').map((b) => b.trim()),
      schemaRegistryUrl: parsed.data.SCHEMA_REGISTRY_URL,
      redisUrl: parsed.data.REDIS_URL,
      databaseUrl: parsed.data.DATABASE_URL,
    },
  };
}
