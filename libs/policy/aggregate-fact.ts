import { z } from 'zod';
import type { AggregateFact, FactSeries } from '../core/aggregate-fact.js';
import type { ExecutionContext } from '../core/types.js';
import type { FactContribution } from '../ports/fact-store.js';
import { readPath } from './field-path.js';
import { toUnits, unitsText } from './cedar-types.js';

const CEDAR_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ARG_DIMENSION = /^args\.[^.]+(\.[^.]+)*$/;

const roleList = z.array(z.string().min(1)).min(1);

export type { AggregateFact, FactDimension, FactSeries } from '../core/aggregate-fact.js';

/** The shape of {@link AggregateFact} as data. */
export const aggregateFactSchema = z
  .object({
    name: z
      .string()
      .regex(CEDAR_IDENTIFIER, 'must be a Cedar identifier (letters, digits, _)')
      .refine((name) => !name.startsWith('__'), 'must not start with __'),
    tools: z.array(z.string().min(1)).min(1),
    measure: z.union([
      z.object({ sum: z.string().min(1) }).strict(),
      z.object({ count: z.literal(true) }).strict(),
    ]),
    per: z.array(
      z.union([
        z.literal('resourceKey'),
        z.literal('principal'),
        z.literal('tool'),
        z.string().regex(ARG_DIMENSION, 'must be resourceKey, principal, tool or args.<field path>'),
      ]),
    ),
    windowMs: z.number().int().positive(),
    by: z.object({ roles: roleList.optional(), exceptRoles: roleList.optional() }).strict().optional(),
  })
  .strict();

/** Whether a fact is a count (a Cedar Long) rather than a sum (a Cedar decimal). */
export function isCount(fact: AggregateFact): boolean {
  return 'count' in fact.measure;
}

/** Everything a call needs to read one fact and, later, add to it. */
export function factSeries(
  fact: AggregateFact,
  call: {
    readonly tool: string;
    readonly args: unknown;
    readonly resourceKey: string;
    /** The id its contribution is recorded under: the call's idempotency key. */
    readonly contributionId: string;
  },
  ctx: ExecutionContext,
): FactSeries {
  const group = fact.per.map((dimension) => {
    if (dimension === 'resourceKey') return call.resourceKey;
    if (dimension === 'principal') return ctx.principal.id;
    if (dimension === 'tool') return call.tool;
    const value = readPath(call.args, dimension.slice('args.'.length));
    return value === undefined ? null : value;
  });
  const key = `${fact.name}|${JSON.stringify([ctx.tenant, ...group])}`;
  return {
    fact,
    query: { key, windowMs: fact.windowMs, exceptCallId: call.contributionId },
    own: ownUnits(fact, call.args, ctx),
  };
}

function ownUnits(fact: AggregateFact, args: unknown, ctx: ExecutionContext): number | undefined {
  if (!counts(fact, ctx)) return 0;
  if ('count' in fact.measure) return 1;
  const value = readPath(args, fact.measure.sum);
  return typeof value === 'number' ? toUnits(value) : undefined;
}

function counts(fact: AggregateFact, ctx: ExecutionContext): boolean {
  const roles = new Set(ctx.principal.roles ?? []);
  const by = fact.by;
  if (by?.roles !== undefined && !by.roles.some((r) => roles.has(r))) return false;
  if (by?.exceptRoles !== undefined && by.exceptRoles.some((r) => roles.has(r))) return false;
  return true;
}

/** A fact's value as text for the audit record: decimal text for sums, integer text for counts. */
export function factText(fact: AggregateFact, units: number): string {
  return isCount(fact) ? String(units) : unitsText(units);
}

/**
 * The contributions a settled call adds: one per series it counts in (own amount not zero), under
 * the id its series were read without (`query.exceptCallId`).
 */
export function contributionsOf(series: readonly FactSeries[], atMs: number): FactContribution[] {
  return series
    .filter((s) => s.own !== undefined && s.own !== 0)
    .map((s) => ({
      key: s.query.key,
      callId: s.query.exceptCallId,
      units: s.own!,
      atMs,
      windowMs: s.query.windowMs,
    }));
}
