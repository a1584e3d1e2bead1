import { ToolgateError } from '../core/errors.js';

/** How many ids of each kind a failure message lists before summarizing. */
const SHOWN = 10;

/**
 * Checks that `results` answer exactly the `requested` call ids: each requested id once, nothing else.
 * Order does not matter. Throws a ToolgateError INTERNAL naming the missing, extra and duplicated ids
 * (and duplicates within `requested`, which a provider message cannot answer twice).
 *
 * Why: a provider rejects or mis-threads a turn whose tool results do not match its tool calls, and
 * a call silently left unanswered is a call that "never returns". Builders call
 * this before producing a provider message.
 */
export function assertSameCallIds(
  requested: readonly string[],
  results: readonly { readonly callId: string }[],
): void {
  const wanted = new Set(requested);
  const requestedTwice = duplicates(requested);
  const answered = results.map((r) => r.callId);
  const answeredTwice = duplicates(answered);
  const seen = new Set(answered);
  const missing = [...wanted].filter((id) => !seen.has(id));
  const extra = [...seen].filter((id) => !wanted.has(id));
  const problems: string[] = [];
  if (missing.length > 0) problems.push(`missing results for ${list(missing)}`);
  if (extra.length > 0) problems.push(`results for unrequested calls ${list(extra)}`);
  if (answeredTwice.length > 0) problems.push(`more than one result for ${list(answeredTwice)}`);
  if (requestedTwice.length > 0) problems.push(`call ids requested more than once ${list(requestedTwice)}`);
  if (problems.length > 0) {
    throw new ToolgateError('INTERNAL', `Tool results do not match the tool calls: ${problems.join('; ')}.`);
  }
}

function duplicates(ids: readonly string[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const id of ids) (seen.has(id) ? twice : seen).add(id);
  return [...twice];
}

function list(ids: readonly string[]): string {
  const shown = ids.slice(0, SHOWN).map((id) => JSON.stringify(id));
  return ids.length > SHOWN ? `${shown.join(', ')} and ${ids.length - SHOWN} more` : shown.join(', ');
}
