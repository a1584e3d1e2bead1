/**
 * What the test run prints when its global setup cannot provide a server: the cause and how to
 * start it, and that no test ran. Printed as the run's last words (see {@link failSetup}), because
 * vitest itself would lead with "No test files found", which sends the reader looking for a wrong
 * include pattern, and show the cause after it as an "Unhandled Error" with vitest's stack.
 */
export function setupFailureText(err: unknown): string {
  const cause = err instanceof Error ? err.message : String(err);
  return `\nThe tests did not run: a server they need is not available.\n${cause}\n`;
}

/** Prints {@link setupFailureText} to stderr and ends the run with exit code 1. */
export function failSetup(err: unknown): never {
  process.stderr.write(setupFailureText(err));
  process.exit(1);
}
