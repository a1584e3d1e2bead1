/**
 * A group a fact is kept per: the call's resource key (its serialization key: the one grouping
 * under which a limit is race-free), the principal, the tool, or the value of an argument
 * (`args.customer_id`). Every fact is also kept per tenant.
 */
export type FactDimension = 'resourceKey' | 'principal' | 'tool' | `args.${string}`;

/**
 * An aggregate a business rule can read as `context.facts.<name>`: a sum of one argument, or a count,
 * over the settled calls of some tools within a sliding window, per group.
 *
 * - `tools`: whose calls it is about. A call of one of them is judged with the fact, and adds to it
 *   once its effect settled (SUCCESS; or UNRESOLVED, or an error after the effect, since the effect
 *   may have happened: a limit counts what may have been spent).
 * - `measure`: `{ sum: 'amount' }` (a number argument, summed as a decimal of four places) or
 *   `{ count: true }` (a Long).
 * - `per`: the groups (see {@link FactDimension}); always per tenant as well.
 * - `windowMs`: how far back it counts.
 * - `by`: whose calls count: a principal with ANY of `roles`, and NONE of `exceptRoles` (each only
 *   when given). A call whose principal does not match is judged with the fact but does not add to it.
 *
 * What a rule reads is the total **as it would stand with this call counted** (the call's own amount
 * added when its principal matches `by`), so a limit is written as the limit:
 * `context.facts.refunded_30d.greaterThan(decimal("50.00"))`.
 */
export interface AggregateFact {
  readonly name: string;
  readonly tools: readonly string[];
  readonly measure: { readonly sum: string } | { readonly count: true };
  readonly per: readonly FactDimension[];
  readonly windowMs: number;
  readonly by?: { readonly roles?: readonly string[]; readonly exceptRoles?: readonly string[] };
}

/** What one call contributes to, and reads from, one fact. */
export interface FactSeries {
  readonly fact: AggregateFact;
  /**
   * The series it reads (`FactStore.sum`), named by the fact and the call's groups, without the
   * call's own earlier contribution (`exceptCallId`: the id it is recorded under).
   */
  readonly query: { readonly key: string; readonly windowMs: number; readonly exceptCallId: string };
  /**
   * This call's own units (0 when its principal does not match `by`); `undefined` when the summed
   * argument is absent or cannot be held as a decimal — the fact then cannot be computed and a rule
   * reading it refuses (fail closed).
   */
  readonly own: number | undefined;
}
