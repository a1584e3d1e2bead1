/** Command-line flags shared by the benchmark scripts: `--quick`, and `--name value` numbers. */
export interface BenchArgs {
  /** A fast smoke run: fewer calls, fewer repeats, shorter phases. */
  readonly quick: boolean;
  /** The number after `--<name>`, or `fallback` when the flag is absent. Throws on a non-number. */
  number(name: string, fallback: number): number;
  /** The comma-separated names after `--<name>`, or undefined when the flag is absent. */
  list(name: string): string[] | undefined;
}

export function parseArgs(argv: readonly string[] = process.argv.slice(2)): BenchArgs {
  return {
    quick: argv.includes('--quick'),
    number(name, fallback) {
      const at = argv.indexOf(`--${name}`);
      if (at === -1) return fallback;
      const value = Number(argv[at + 1]);
      if (!Number.isFinite(value) || value <= 0) {
        throw new RangeError(`--${name} needs a positive number, got ${String(argv[at + 1])}`);
      }
      return value;
    },
    list(name) {
      const at = argv.indexOf(`--${name}`);
      if (at === -1) return undefined;
      return (argv[at + 1] ?? '').split(',').filter(Boolean);
    },
  };
}
