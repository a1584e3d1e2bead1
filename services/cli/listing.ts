import { MAX_QUERY_LIMIT } from '../../libs/audit/query.js';
import type { Args } from './args.js';
import { EXIT, UsageError } from './cli-error.js';
import type { OptionSpec } from './command.js';
import type { Output } from './output.js';

/** How many rows a listing command returns unless `--limit` says otherwise. */
const DEFAULT_LIMIT = 100;

/** The `--limit <n>` option of a listing command: at most n `noun` (e.g. "records"), 1 to the query maximum. */
export function limitOption(noun: string): OptionSpec {
  return {
    type: 'string',
    valueName: 'n',
    description: `At most n ${noun} (1-${MAX_QUERY_LIMIT}).`,
    defaultText: String(DEFAULT_LIMIT),
  };
}

/** The `--limit` given (a usage error outside 1 to the query maximum), else the default of {@link limitOption}. */
export function listLimit(args: Args): number {
  return args.int('limit', { min: 1, max: MAX_QUERY_LIMIT }, DEFAULT_LIMIT)!;
}

/**
 * The `--from` / `--to` options of a command over recorded things (`noun`, e.g. "Records"): times
 * as ISO 8601, a date, or epoch ms; `--from` inclusive, `--to` exclusive (see {@link timeWindow}).
 */
export function timeWindowOptions(noun: string): Readonly<Record<'from' | 'to', OptionSpec>> {
  return {
    from: {
      type: 'string',
      valueName: 'ISO',
      description: `${noun} recorded at or after this time (ISO 8601, date, or epoch ms).`,
    },
    to: { type: 'string', valueName: 'ISO', description: `${noun} recorded before this time.` },
  };
}

/**
 * The `--from` / `--to` window as epoch ms (either may be absent); a usage error when a time does
 * not parse or `--from` is not earlier than `--to`.
 */
export function timeWindow(args: Args): {
  readonly fromMs: number | undefined;
  readonly toMs: number | undefined;
} {
  const fromMs = args.time('from');
  const toMs = args.time('to');
  if (fromMs !== undefined && toMs !== undefined && fromMs >= toMs) {
    throw new UsageError('--from must be earlier than --to.', args.command);
  }
  return { fromMs, toMs };
}

/** What {@link printListing} prints. */
export interface Listing<T> {
  /** The JSON document's key for the rows, e.g. "records". */
  readonly key: string;
  /** The rows' name in the count line, singular, e.g. "record". */
  readonly noun: string;
  /** The line that says no row matched, e.g. "No audit records match.". */
  readonly none: string;
  readonly rows: readonly T[];
  /** The limit the rows were read with: as many rows as that may mean more exist. */
  readonly limit: number;
  readonly table: (rows: readonly T[]) => string;
}

/**
 * Prints the rows of a listing command and returns its exit code (always 0). JSON: `{ count,
 * limit, truncated, <key>: rows }`. Text: the table and a count line (`<n> <noun>s.`), or `none`; when
 * the limit was reached, a note on stderr says how to see more.
 */
export function printListing<T>(out: Output, listing: Listing<T>): number {
  const { rows, limit, noun } = listing;
  out.json({ count: rows.length, limit, truncated: rows.length === limit, [listing.key]: rows });
  if (rows.length === 0) {
    out.text(listing.none);
    return EXIT.ok;
  }
  out.text(listing.table(rows));
  out.text(`${rows.length} ${noun}${rows.length === 1 ? '' : 's'}.`);
  if (rows.length === limit)
    out.note(`Showing the first ${limit}: raise --limit or narrow the filters to see more.`);
  return EXIT.ok;
}
