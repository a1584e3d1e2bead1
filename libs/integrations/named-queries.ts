import type pg from 'pg';
import { z } from 'zod';
import { classify } from '../core/classify.js';
import { ToolgateError } from '../core/errors.js';

/**
 * What a query author writes: one pre-written, reviewed query the model may run by name
 * (never model-written SQL). The SQL is a constant; the model supplies only typed parameters; the tenant is bound from
 * the verified context.
 * - `sql` uses `$1..$n` placeholders only, and `$1` is ALWAYS the caller's tenant, so no query can
 *   forget to scope by it; `values` returns the values for `$2..$n` from the validated parameters.
 * - It must contain a `LIMIT` (the row cap lives in the database, not only in our slicing).
 * - `params` is a zod shape: it becomes the query's branch of the tool's input schema.
 */
export interface NamedQuerySpec<S extends z.ZodRawShape, R> {
  readonly description: string;
  readonly params: S;
  readonly sql: string;
  /** Values for `$2..$n` (method syntax: a query set can hold queries of different parameters). */
  values(params: z.infer<z.ZodObject<S>>): readonly unknown[];
  readonly row: z.ZodType<R>;
  /** At most this many rows are returned; more are cut off and `truncated` says so. */
  readonly maxRows: number;
}

/** A checked named query (see {@link defineNamedQuery}). */
export interface NamedQuery<S extends z.ZodRawShape = z.ZodRawShape, R = unknown> extends NamedQuerySpec<
  S,
  R
> {
  readonly name: string;
  /** The strict parameter schema (unknown keys refused). */
  readonly paramsSchema: z.ZodObject<S>;
  /** Highest placeholder number: the statement takes exactly this many values. */
  readonly placeholders: number;
}

/**
 * Checks a query definition once, at start-up: placeholders contiguous from `$1`, `$1` present, a
 * single statement (no `;` except one trailing), a `LIMIT`, a positive `maxRows`. Throws an Error
 * naming every problem.
 */
export function defineNamedQuery<S extends z.ZodRawShape, R>(
  name: string,
  spec: NamedQuerySpec<S, R>,
): NamedQuery<S, R> {
  const problems: string[] = [];
  const numbers = new Set([...spec.sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  const highest = numbers.size === 0 ? 0 : Math.max(...numbers);
  for (let n = 1; n <= highest; n++) if (!numbers.has(n)) problems.push(`placeholder $${n} is unused`);
  if (!numbers.has(1)) problems.push('$1 (the tenant) must scope the query');
  if (spec.sql.trim().replace(/;\s*$/, '').includes(';')) problems.push('only one statement is allowed');
  if (!/\blimit\b/i.test(spec.sql)) problems.push('the query must LIMIT its rows');
  if (!Number.isSafeInteger(spec.maxRows) || spec.maxRows <= 0) problems.push('maxRows must be > 0');
  if (problems.length > 0) throw new Error(`named query ${name}: ${problems.join('; ')}`);
  return Object.freeze({ ...spec, name, paramsSchema: z.strictObject(spec.params), placeholders: highest });
}

/** The rows of one named query run. */
export interface NamedQueryResult<R> {
  readonly rows: readonly R[];
  readonly truncated: boolean;
}

/** Options of {@link runNamedQuery}. */
export interface RunNamedQueryOptions {
  /** Server-side limit on the statement (a transaction-local statement_timeout). */
  readonly statementTimeoutMs: number;
}

/**
 * Runs `query` with `$1` = `tenant` and `$2..$n` = `query.values(params)` as a parameterized statement
 * (the values travel apart from the SQL text; nothing is ever concatenated into it), inside a READ
 * ONLY transaction with a statement timeout, so even a wrong definition cannot write.
 *
 * `params` is validated against the query's strict schema first (SCHEMA_INVALID when it does not
 * match). Returns at most `maxRows` rows, each validated by `query.row`. Errors: a bind count that
 * does not match the SQL → INTERNAL; the statement timed out → TIMEOUT (read-only: safe to retry);
 * input the database refused as invalid (22xxx) → CALLER_ERROR; a row of the wrong shape →
 * BAD_OUTPUT; other database errors → SERVER_ERROR; an unreachable database as `classify` says.
 * Messages never include the database's own error text (it can quote data).
 */
export async function runNamedQuery<S extends z.ZodRawShape, R>(
  pool: pg.Pool,
  query: NamedQuery<S, R>,
  tenant: string,
  params: unknown,
  options: RunNamedQueryOptions,
): Promise<NamedQueryResult<R>> {
  const parsed = query.paramsSchema.safeParse(params);
  if (!parsed.success) {
    throw new ToolgateError('SCHEMA_INVALID', `The parameters of report ${query.name} are not valid.`, {
      cause: parsed.error,
    });
  }
  const values = [tenant, ...query.values(parsed.data)];
  if (values.length !== query.placeholders) {
    throw new ToolgateError('INTERNAL', 'The report query is misconfigured.');
  }
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw classify(err);
  }
  let broken = false;
  try {
    await client.query('BEGIN READ ONLY');
    await client.query("SELECT set_config('statement_timeout', $1, true)", [
      String(Math.max(1, Math.ceil(options.statementTimeoutMs))),
    ]);
    const result = await client.query({ text: query.sql, values });
    await client.query('COMMIT');
    const rows = z.array(query.row).safeParse(result.rows.slice(0, query.maxRows));
    if (!rows.success) {
      throw new ToolgateError('BAD_OUTPUT', 'The report returned data in an unexpected shape.', {
        cause: rows.error,
      });
    }
    return { rows: rows.data, truncated: result.rows.length > query.maxRows };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw databaseError(err);
  } finally {
    client.release(broken);
  }
}

function databaseError(err: unknown): ToolgateError {
  if (err instanceof ToolgateError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (code === '57014') {
    return new ToolgateError('TIMEOUT', 'The report took too long and was stopped. Narrow it and retry.', {
      cause: err,
    });
  }
  if (typeof code === 'string' && code.startsWith('22')) {
    return new ToolgateError('CALLER_ERROR', 'The database refused a report parameter as invalid.', {
      suggestedFix: 'Check the parameter formats in the tool description.',
      cause: err,
    });
  }
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    return new ToolgateError('SERVER_ERROR', 'The report database failed to run the report.', { cause: err });
  }
  return classify(err);
}

/**
 * The input schema for choosing one of `queries`: `{ query: <name>, ...that query's parameters }`,
 * a union discriminated by `query`, so the model sees each query's own typed parameters and can send
 * nothing else (every branch is strict). Put it under a key of the tool's object input.
 */
export function namedQueryChoice(
  queries: readonly NamedQuery[],
): z.ZodType<{ readonly query: string } & Record<string, unknown>> {
  const branches = queries.map((q) =>
    z.strictObject({ query: z.literal(q.name).describe(q.description), ...q.params }),
  );
  const [first, second, ...rest] = branches;
  if (first === undefined) throw new Error('at least one named query is needed');
  const schema = second === undefined ? first : z.discriminatedUnion('query', [first, second, ...rest]);
  return schema;
}
