import { z } from 'zod';

type Issue = z.core.$ZodIssue;

/** How many issues a model-facing message lists by default; the rest are counted, not listed. */
export const DEFAULT_MAX_ISSUES = 5;

const MAX_SEGMENT_CHARS = 40;
const MAX_LITERAL_CHARS = 40;
const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

const englishMap = z.locales.en().localeError;

/**
 * Renders zod 4 issues as model-readable lines, one per problem, each `path: message`
 * (e.g. `line_items.0.quantity: must be greater than 0`). An unrecognized-keys issue becomes one
 * line per key (`shipping.gift_wrap: unknown field; remove it`); an issue at the root is labelled
 * `arguments`.
 *
 * `input` is the value that was parsed; it is used to name what was received ("expected number,
 * received string") and to tell zod's stock messages from ones a schema author wrote on purpose
 * (those carry domain constraints and are kept verbatim). Values from the input are never echoed,
 * only their types. Pure; never throws for any issue shape zod produces.
 */
export function zodIssueLines(issues: readonly Issue[], input?: unknown): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        lines.push(`${formatPath([...issue.path, key])}: unknown field; remove it`);
      }
      continue;
    }
    lines.push(`${formatPath(issue.path)}: ${describe(issue, valueAt(input, issue.path))}`);
  }
  return lines;
}

/**
 * {@link zodIssueLines} joined with "; " and capped to `maxIssues` lines, followed by
 * "(and N more)" when lines were left out, so one bad call cannot produce an unbounded message.
 */
export function formatZodIssues(
  issues: readonly Issue[],
  input?: unknown,
  maxIssues: number = DEFAULT_MAX_ISSUES,
): string {
  const lines = zodIssueLines(issues, input);
  const cap = Math.max(1, Math.floor(maxIssues));
  const shown = lines.slice(0, cap).join('; ');
  const omitted = lines.length - cap;
  return omitted > 0 ? `${shown} (and ${omitted} more)` : shown;
}

/** Dot path (`line_items.0.quantity`); unusual keys are quoted and long ones shortened. */
export function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'arguments';
  return path
    .map((segment) => {
      if (typeof segment === 'number') return String(segment);
      const text = typeof segment === 'symbol' ? String(segment) : segment;
      const short = text.length > MAX_SEGMENT_CHARS ? `${text.slice(0, MAX_SEGMENT_CHARS)}…` : text;
      return PLAIN_KEY.test(short) ? short : JSON.stringify(short);
    })
    .join('.');
}

function describe(issue: Issue, received: unknown): string {
  const authored = authoredMessage(issue, received);
  if (authored !== undefined) return authored;
  switch (issue.code) {
    case 'invalid_type':
      return describeType(issue.expected, received);
    case 'too_small':
      return describeBound(
        'min',
        issue.origin,
        issue.minimum,
        issue.inclusive !== false,
        issue.exact === true,
      );
    case 'too_big':
      return describeBound(
        'max',
        issue.origin,
        issue.maximum,
        issue.inclusive !== false,
        issue.exact === true,
      );
    case 'invalid_format':
      return describeFormat(issue);
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${literal(issue.values[0])}`
        : `must be one of ${issue.values.map(literal).join(', ')}`;
    case 'invalid_union':
      return describeUnion(issue, received);
    case 'invalid_key':
      return `has an invalid key (${issue.issues.map((i) => describe(i, undefined)).join(', ')})`;
    case 'invalid_element':
      return `has an invalid element (${issue.issues.map((i) => describe(i, undefined)).join(', ')})`;
    default:
      return issue.message;
  }
}

/**
 * The schema author's own message, if the issue carries one. zod fills `message` from the English
 * locale unless the schema says otherwise, so a message that differs from the locale's is authored.
 */
function authoredMessage(issue: Issue, received: unknown): string | undefined {
  if (issue.code === 'custom') return issue.message;
  try {
    const stock = englishMap({ ...issue, input: received } as unknown as Parameters<typeof englishMap>[0]);
    const stockText = typeof stock === 'string' ? stock : stock?.message;
    return stockText === undefined || stockText === issue.message ? undefined : issue.message;
  } catch {
    return undefined;
  }
}

function describeType(expected: string, received: unknown): string {
  if (received === undefined) return `is required (expected ${expected === 'int' ? 'an integer' : expected})`;
  if (expected === 'int' && typeof received === 'number') return 'must be an integer';
  return `expected ${expected === 'int' ? 'an integer' : expected}, received ${typeName(received)}`;
}

function describeBound(
  side: 'min' | 'max',
  origin: string,
  limit: number | bigint,
  inclusive: boolean,
  exact: boolean,
): string {
  const n = String(limit);
  switch (origin) {
    case 'number':
    case 'int':
    case 'bigint':
      if (exact) return `must be exactly ${n}`;
      if (side === 'min')
        return inclusive ? `must be greater than or equal to ${n}` : `must be greater than ${n}`;
      return inclusive ? `must be less than or equal to ${n}` : `must be less than ${n}`;
    case 'string':
      if (side === 'min' && inclusive && !exact && Number(limit) === 1) return 'must not be empty';
      return `must be ${bound(side, inclusive, exact)} ${n} characters long`;
    case 'array':
    case 'set':
      if (side === 'min' && inclusive && !exact && Number(limit) === 1) return 'must have at least 1 item';
      return `must have ${bound(side, inclusive, exact)} ${n} items`;
    case 'date': {
      const when = new Date(Number(limit)).toISOString();
      if (side === 'min') return inclusive ? `must be on or after ${when}` : `must be after ${when}`;
      return inclusive ? `must be on or before ${when}` : `must be before ${when}`;
    }
    case 'file':
      return `must be ${bound(side, inclusive, exact)} ${n} bytes`;
    default:
      return `is too ${side === 'min' ? 'small' : 'big'} (${side === 'min' ? 'minimum' : 'maximum'} ${n})`;
  }
}

function bound(side: 'min' | 'max', inclusive: boolean, exact: boolean): string {
  if (exact) return 'exactly';
  if (side === 'min') return inclusive ? 'at least' : 'more than';
  return inclusive ? 'at most' : 'fewer than';
}

const FORMAT_NAMES: Readonly<Record<string, string>> = {
  email: 'an email address',
  url: 'a URL',
  uuid: 'a UUID',
  guid: 'a GUID',
  datetime: 'an ISO 8601 date-time (e.g. 2024-05-01T12:00:00Z)',
  date: 'an ISO 8601 date (YYYY-MM-DD)',
  time: 'an ISO 8601 time (HH:MM:SS)',
  duration: 'an ISO 8601 duration',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  e164: 'an E.164 phone number',
  lowercase: 'a lowercase string',
  uppercase: 'an uppercase string',
  json_string: 'a JSON string',
};

function describeFormat(issue: z.core.$ZodIssueInvalidStringFormat): string {
  const extra = issue as unknown as Record<string, unknown>;
  switch (issue.format) {
    case 'regex':
      return `must match the pattern ${issue.pattern ?? ''}`.trimEnd();
    case 'starts_with':
      return `must start with ${literal(extra.prefix)}`;
    case 'ends_with':
      return `must end with ${literal(extra.suffix)}`;
    case 'includes':
      return `must contain ${literal(extra.includes)}`;
    default:
      return `must be ${FORMAT_NAMES[issue.format] ?? `a valid ${issue.format}`}`;
  }
}

function describeUnion(issue: z.core.$ZodIssueInvalidUnion, received: unknown): string {
  if (issue.inclusive === false) return 'matches more than one allowed form; make it unambiguous';
  if (issue.discriminator !== undefined) {
    const options = issue.options ?? [];
    // zod puts the discriminator itself at the end of the path, so the line reads `kind: must be …`.
    return options.length > 0
      ? `must be one of ${options.map(literal).join(', ')}`
      : 'has an unrecognized value';
  }
  const expected = new Set<string>();
  for (const branch of issue.errors) {
    const first = branch[0];
    if (branch.length === 1 && first?.code === 'invalid_type' && first.path.length === 0) {
      expected.add(first.expected === 'int' ? 'integer' : first.expected);
    }
  }
  if (expected.size === issue.errors.length && expected.size > 0) {
    return `expected one of ${[...expected].join(', ')}, received ${typeName(received)}`;
  }
  return 'does not match any of the allowed forms';
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN';
  return typeof value;
}

function literal(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'bigint' ? `${value}n` : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > MAX_LITERAL_CHARS ? `${text.slice(0, MAX_LITERAL_CHARS)}…` : text;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = root;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    if (typeof segment === 'symbol') return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}
