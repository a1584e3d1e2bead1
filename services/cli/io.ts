import type { AuditStore } from '../../libs/ports/audit-store.js';
import type { CaseStore } from '../../libs/ports/case-store.js';
import type { Clock } from '../../libs/core/clock.js';
import type { Catalog } from '../../libs/catalog/catalog.js';
import type { Operations } from '../../libs/reconcile/operations.js';
import type { CliConfig } from './config.js';

/** Where the CLI writes; each call gets whole lines. */
export interface TextSink {
  write(text: string): void;
  /** True when the sink is a terminal (as on process.stdout); then {@link columns} is its width. */
  readonly isTTY?: boolean;
  /** The terminal's width in characters, when {@link isTTY}. */
  readonly columns?: number;
}

/**
 * Everything {@link runCli} touches outside itself, so tests can run it in-process with captured
 * output and chosen stores. In production (main.ts) stdout/stderr are the process streams, `env` is
 * the process environment and every store is opened from the configured URLs.
 */
export interface CliIo {
  readonly stdout: TextSink;
  /** Errors, warnings and progress; never part of `--json` output. */
  readonly stderr: TextSink;
  /** The environment to configure from (default: the process environment, read in config.ts). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Relative paths given on the command line are resolved against it (default: process.cwd()). */
  readonly cwd?: string;
  /** Times written to cases (default: the system clock). */
  readonly clock?: Clock;
  /**
   * Stores to use instead of opening Postgres (tests run commands against the in-memory adapters,
   * which pass the same contract suites). A command then opens no database connection for them.
   */
  readonly stores?: { readonly audit?: AuditStore; readonly cases?: CaseStore };
  /**
   * The tool catalog to export instead of loading the configured catalog module (which gets a
   * database pool, as in the executor). The CLI does not close a catalog given here.
   */
  readonly catalog?: Catalog;
  /**
   * The reconciliation operations to run `dlq` commands against instead of wiring them to Postgres,
   * Kafka, the schema registry and Redis (tests pass operations built over in-memory adapters).
   */
  readonly operations?: Operations;
}

/** The line width when neither COLUMNS nor a terminal says otherwise. */
export const DEFAULT_OUTPUT_WIDTH = 100;

/**
 * The width the CLI's tables fit: COLUMNS from the configuration (a positive integer; any other
 * value is ignored, as a terminal setting is no reason to refuse a command), else the width of
 * `stdout` when it is a terminal, else {@link DEFAULT_OUTPUT_WIDTH} (a pipe or a file).
 */
export function outputWidth(stdout: TextSink, config: CliConfig): number {
  const fromEnv = columnsSetting(config);
  if (fromEnv !== undefined) return fromEnv;
  const { isTTY, columns } = stdout;
  if (isTTY === true && columns !== undefined && Number.isInteger(columns) && columns > 0) return columns;
  return DEFAULT_OUTPUT_WIDTH;
}

function columnsSetting(config: CliConfig): number | undefined {
  try {
    return config.get('COLUMNS', '');
  } catch {
    return undefined;
  }
}
