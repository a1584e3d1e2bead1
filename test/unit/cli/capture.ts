import type { CliIo } from '../../../services/cli/io.js';
import { runCli } from '../../../services/cli/run-cli.js';

/** Wide enough that no test table is narrowed or turned into blocks. */
export const UNLIMITED_COLUMNS = 10_000;

/** What one in-process CLI run printed and returned. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as JSON (throws when it is not exactly one JSON document). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json<T = any>(): T;
}

/**
 * Runs the CLI in-process with captured output. `env` replaces the process environment entirely (an
 * empty one by default), so a developer's DATABASE_URL never leaks into a unit test. COLUMNS is
 * {@link UNLIMITED_COLUMNS} unless `env` sets it, so a table's layout in a test does not depend on
 * the width; the width tests set it.
 */
export async function cli(argv: readonly string[], io: Partial<CliIo> = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    ...io,
    env: { COLUMNS: String(UNLIMITED_COLUMNS), ...io.env },
    stdout: { write: (t) => void (stdout += t) },
    stderr: { write: (t) => void (stderr += t) },
  });
  return {
    code,
    stdout,
    stderr,
    json: <T>() => JSON.parse(stdout) as T,
  };
}
